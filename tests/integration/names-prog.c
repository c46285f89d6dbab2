/* The program whose call site test report-names names: a small exported function (names_tiny,
 * in .dynsym) placed just before a static one (names_site, in .symtab alone) that holds the
 * site. Stripped, the site lies past the end of the only symbol before it, names_tiny, which
 * addr2line -f nevertheless gives as its function. Built with -fno-reorder-functions so that
 * the functions keep their order in the source; the test checks the layout itself. */
#include <stdlib.h>

__attribute__((noinline, visibility("default"))) int names_tiny(int x)
{
	return x + 1;
}

/* Long enough that a site in its middle is far from names_tiny's end. */
__attribute__((noinline, used)) static int names_site(int n)
{
	volatile int acc = 0;
	for (int i = 0; i < n; i++) {
		acc += i * n;
		if (acc % 7 == 3)
			acc ^= i;
	}
	return acc;
}

int main(int argc, char **argv)
{
	(void)argv;
	return (names_site(argc) + names_tiny(argc)) == 42 ? EXIT_FAILURE : EXIT_SUCCESS;
}
