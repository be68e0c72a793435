/* html.c - HTML to text: tags, comments and the bodies of script and style
 * elements are dropped (each becomes one space, so words on both sides stay
 * apart), character references are decoded.
 *
 * This is a cleaner for fingerprinting, not a parser: it never fails, and any
 * '<' that does not open a tag, comment or declaration is text. Decoded are
 * numeric references (&#65; &#x41;; zero, surrogates and values above
 * U+10FFFF become U+FFFD) and the named references of HTML 4 (Latin-1,
 * symbols and the special set); others stay as written. The output is never
 * longer than the input plus one byte, because every reference and tag is at
 * least as long as what replaces it.
 *
 * Time is linear: each byte is looked at a bounded number of times (a search
 * for the end of a comment or of a script body starts where the tag ended and
 * the text resumes after what it found). The ctx's interrupt hook is polled
 * per SH_INTR_STEP bytes of the main loop and of those searches. */
#include <string.h>
#include <strings.h>
#include "../common/internal.h"

static const char *const latin1[96] = {
	"nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy",
	"ordf", "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3",
	"acute", "micro", "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14",
	"frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring",
	"AElig", "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc",
	"Iuml", "ETH", "Ntilde", "Ograve", "Oacute", "Ocirc", "Otilde", "Ouml", "times",
	"Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN", "szlig", "agrave",
	"aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil", "egrave", "eacute",
	"ecirc", "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde", "ograve",
	"oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
	"uuml", "yacute", "thorn", "yuml",
};

static const struct {
	const char *name;
	uint32_t cp;
} special[] = {
	{"quot", 0x22}, {"amp", 0x26}, {"apos", 0x27}, {"lt", 0x3C}, {"gt", 0x3E},
	{"OElig", 0x152}, {"oelig", 0x153}, {"Scaron", 0x160}, {"scaron", 0x161},
	{"Yuml", 0x178}, {"fnof", 0x192}, {"circ", 0x2C6}, {"tilde", 0x2DC},
	{"ensp", 0x2002}, {"emsp", 0x2003}, {"thinsp", 0x2009}, {"zwnj", 0x200C},
	{"zwj", 0x200D}, {"lrm", 0x200E}, {"rlm", 0x200F}, {"ndash", 0x2013},
	{"mdash", 0x2014}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"sbquo", 0x201A},
	{"ldquo", 0x201C}, {"rdquo", 0x201D}, {"bdquo", 0x201E}, {"dagger", 0x2020},
	{"Dagger", 0x2021}, {"bull", 0x2022}, {"hellip", 0x2026}, {"permil", 0x2030},
	{"prime", 0x2032}, {"Prime", 0x2033}, {"lsaquo", 0x2039}, {"rsaquo", 0x203A},
	{"oline", 0x203E}, {"frasl", 0x2044}, {"euro", 0x20AC}, {"trade", 0x2122},
	{"larr", 0x2190}, {"uarr", 0x2191}, {"rarr", 0x2192}, {"darr", 0x2193},
	{"harr", 0x2194}, {"minus", 0x2212}, {"infin", 0x221E}, {"ne", 0x2260},
	{"le", 0x2264}, {"ge", 0x2265},
};

static uint32_t named(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < 96; i++)
		if (strlen(latin1[i]) == n && memcmp(latin1[i], s, n) == 0)
			return 0xA0 + (uint32_t)i;
	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
		if (strlen(special[i].name) == n && memcmp(special[i].name, s, n) == 0)
			return special[i].cp;
	return 0;
}

/* Decodes the reference at in[i] ('&'); returns its length, 0 if none. */
static size_t entity(const uint8_t *in, size_t len, size_t i, uint32_t *cp)
{
	size_t j = i + 1, start;
	uint64_t v = 0;

	if (j < len && in[j] == '#') {
		int hex = j + 1 < len && (in[j + 1] == 'x' || in[j + 1] == 'X');
		j += hex ? 2 : 1;
		start = j;
		for (; j < len && j - start < 10; j++) {
			uint8_t c = in[j];
			int d = c >= '0' && c <= '9' ? c - '0'
				: hex && (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10
									   : -1;
			if (d < 0)
				break;
			v = v * (hex ? 16 : 10) + (uint64_t)d;
		}
		if (j == start || j >= len || in[j] != ';')
			return 0;
		*cp = (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) ? 0xFFFD
										  : (uint32_t)v;
		return j + 1 - i;
	}
	start = j;
	while (j < len && j - start < 8 &&
	       (((in[j] | 32) >= 'a' && (in[j] | 32) <= 'z') || (in[j] >= '0' && in[j] <= '9')))
		j++;
	if (j == start || j >= len || in[j] != ';')
		return 0;
	*cp = named(in + start, j - start);
	return *cp ? j + 1 - i : 0;
}

/* The ctx's interrupt hook while one text is cleaned: stop is set once it
 * asked to stop, and every search then ends at once. */
struct poll {
	sh_intr *intr;
	size_t step;
	int stop;
};

/* Reports `done` bytes looked at; 1 if the hook asked to stop. */
static int polled(struct poll *pl, size_t done)
{
	if (!pl->stop && sh_intr_poll(pl->intr, done))
		pl->stop = 1;
	return pl->stop;
}

/* Finds needle (lowercase ASCII) in in[i..len) ignoring case; len if absent
 * (or if the hook stopped the search). */
static size_t find_ci(const uint8_t *in, size_t len, size_t i, const char *needle,
		      struct poll *pl)
{
	size_t n = strlen(needle), poll_at = i + pl->step;
	for (; i + n <= len; i++) {
		if (SH_UNLIKELY(i >= poll_at)) {
			poll_at = i + pl->step;
			if (polled(pl, pl->step))
				return len;
		}
		if (strncasecmp((const char *)in + i, needle, n) == 0)
			return i;
	}
	return len;
}

/* Length of the tag, comment or declaration at in[i] ('<'); 0 if it is text. */
static size_t markup(const uint8_t *in, size_t len, size_t i, struct poll *pl)
{
	size_t j = i + 1, poll_at = j + pl->step;
	uint8_t quote = 0;

	if (j >= len)
		return 0;
	if (len - j >= 3 && memcmp(in + j, "!--", 3) == 0) {
		size_t e = find_ci(in, len, j + 3, "-->", pl);
		return e == len ? len - i : e + 3 - i;
	}
	if (!((in[j] | 32) >= 'a' && (in[j] | 32) <= 'z') && in[j] != '/' && in[j] != '!' &&
	    in[j] != '?')
		return 0;
	for (; j < len; j++) {
		if (SH_UNLIKELY(j >= poll_at)) {
			poll_at = j + pl->step;
			if (polled(pl, pl->step))
				return len - i;
		}
		if (quote) {
			if (in[j] == quote)
				quote = 0;
		} else if (in[j] == '"' || in[j] == '\'') {
			quote = in[j];
		} else if (in[j] == '>') {
			return j + 1 - i;
		}
	}
	return len - i;
}

/* If the tag at in[i..i+n) opens script or style, the index after its
 * closing tag; else i + n. */
static size_t skip_body(const uint8_t *in, size_t len, size_t i, size_t n, struct poll *pl)
{
	static const char *const raw[] = {"script", "style"};
	for (int k = 0; k < 2; k++) {
		size_t l = strlen(raw[k]);
		if (n > l + 1 && strncasecmp((const char *)in + i + 1, raw[k], l) == 0 &&
		    (in[i + 1 + l] == '>' || in[i + 1 + l] == ' ' || in[i + 1 + l] == '\t' ||
		     in[i + 1 + l] == '\n' || in[i + 1 + l] == '/')) {
			char close[10] = "</";
			size_t e;
			strcat(close, raw[k]);
			e = find_ci(in, len, i + n, close, pl);
			if (e == len)
				return len;
			return e + markup(in, len, e, pl);
		}
	}
	return i + n;
}

simhash_err sh_html_strip(sh_buf *out, const uint8_t *in, size_t len, size_t *out_len,
			  sh_intr *intr)
{
	struct poll pl = { intr, sh_intr_step(intr), 0 };
	size_t i = 0, k = 0, end;
	uint8_t *o;

	if (sh_buf_reserve(out, len + 1))
		return SIMHASH_ENOMEM;
	o = out->p;
	while (i < len && !pl.stop) {
		/* a step at a time: one poll each, no test per byte */
		end = len - i > pl.step ? i + pl.step : len;
		if (i && polled(&pl, pl.step))
			break;
		while (i < end) {
			size_t n;
			uint32_t cp;
			if (in[i] == '<' && (n = markup(in, len, i, &pl)) > 0) {
				i = skip_body(in, len, i, n, &pl);
				o[k++] = ' ';
			} else if (in[i] == '&' && (n = entity(in, len, i, &cp)) > 0) {
				k += sh_utf8_put(o + k, cp);
				i += n;
			} else {
				o[k++] = in[i++];
			}
		}
	}
	if (pl.stop)
		return SIMHASH_EINTR;
	*out_len = k;
	return SIMHASH_OK;
}
