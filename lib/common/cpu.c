/* cpu.c - the one CPU-feature probe of the library: sh_cpu_has(SH_CPU_AVX2 | ...).
 *
 * Every SIMD kernel (the vote planes, MD5 of short features, ASCII folding,
 * the scans and the pair joins) asks here whether its instructions exist, and
 * falls back to its scalar twin, which gives the same bits, when they do not.
 * The compiler's runtime reads the CPU model in a constructor before main, so
 * this only reads it: no state of ours, safe from any thread. Outside x86 no
 * feature exists: every kernel is the scalar one. */
#include "internal.h"

int sh_cpu_has(unsigned features)
{
#if SH_X86
	if ((features & SH_CPU_POPCNT) && !__builtin_cpu_supports("popcnt"))
		return 0;
	if ((features & SH_CPU_AVX2) && !__builtin_cpu_supports("avx2"))
		return 0;
	if ((features & SH_CPU_AVX512F) && !__builtin_cpu_supports("avx512f"))
		return 0;
	if ((features & SH_CPU_AVX512DQ) && !__builtin_cpu_supports("avx512dq"))
		return 0;
	if ((features & SH_CPU_AVX512BW) && !__builtin_cpu_supports("avx512bw"))
		return 0;
	if ((features & SH_CPU_AVX512VPOPCNTDQ) && !__builtin_cpu_supports("avx512vpopcntdq"))
		return 0;
	if ((features & SH_CPU_AVX512VBMI2) && !__builtin_cpu_supports("avx512vbmi2"))
		return 0;
	if ((features & SH_CPU_AVX512VBMI) && !__builtin_cpu_supports("avx512vbmi"))
		return 0;
	if ((features & SH_CPU_BMI2) && !__builtin_cpu_supports("bmi2"))
		return 0;
	return 1;
#else
	return features == 0;
#endif
}
