/* classify.c - the class of a non-ASCII code point after normalization, from
 * ICU's character properties: a letter of Han, Hiragana or Katakana is a CJK
 * character (a word of its own), other letters, digits and marks are word
 * characters, separators and controls spaces, format characters vanish, the
 * rest is punctuation. normalize.c asks once per code point and context (its
 * table keeps the answer). */
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include "../common/internal.h"

static int is_cjk(uint32_t c)
{
	UErrorCode st = U_ZERO_ERROR;
	UScriptCode sc;

	if (c < 0x2E80)
		return 0;
	sc = uscript_getScript((UChar32)c, &st);
	return sc == USCRIPT_HAN || sc == USCRIPT_HIRAGANA || sc == USCRIPT_KATAKANA ||
	       c == 0x30FC || c == 0x3005; /* prolonged sound mark, iteration mark */
}

/* Class of a non-ASCII code point after normalization; -1 drops it (format
 * characters such as joiners, which separate nothing). */
int sh_norm_classify(uint32_t c)
{
	int8_t t = u_charType((UChar32)c);

	switch (t) {
	case U_UPPERCASE_LETTER:
	case U_LOWERCASE_LETTER:
	case U_TITLECASE_LETTER:
	case U_MODIFIER_LETTER:
	case U_OTHER_LETTER:
		return is_cjk(c) ? SH_C_CJK : SH_C_WORD;
	case U_DECIMAL_DIGIT_NUMBER:
	case U_LETTER_NUMBER:
	case U_OTHER_NUMBER:
	case U_NON_SPACING_MARK:
	case U_ENCLOSING_MARK:
	case U_COMBINING_SPACING_MARK:
		return SH_C_WORD;
	case U_SPACE_SEPARATOR:
	case U_LINE_SEPARATOR:
	case U_PARAGRAPH_SEPARATOR:
	case U_CONTROL_CHAR:
		return SH_C_SPACE;
	case U_FORMAT_CHAR:
	case U_UNASSIGNED:
	case U_SURROGATE:
	case U_PRIVATE_USE_CHAR:
		return t == U_FORMAT_CHAR ? -1 : SH_C_PUNCT;
	default:
		return SH_C_PUNCT;
	}
}
