/* libnoisetool: export macro and conventions shared by every public header.
 * Public functions return int: >= 0 on success, -errno on failure. */
#ifndef NOISETOOL_COMMON_H
#define NOISETOOL_COMMON_H

#if defined(NT_BUILDING_LIB) && defined(__GNUC__)
#define NT_API __attribute__((visibility("default")))
#else
#define NT_API
#endif

#if defined(__GNUC__)
#define NT_LIKELY(x) __builtin_expect(!!(x), 1)
#define NT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define NT_LIKELY(x) (x)
#define NT_UNLIKELY(x) (x)
#endif

#endif /* NOISETOOL_COMMON_H */
