/* An application's handler on SIGRTMIN+4 (the injector's signal until issue 38), installed
 * before MPI_Init ("before") or after it ("after"): every signal the program raises, during
 * the job and after MPI_Finalize, must reach it. Prints "rank R raised N handled M" and exits
 * 1 when a raised signal was not handled (the injector's own may add to M: a handler installed
 * over the injector's can get one of its signals before the injector sees it and stops). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "compute.h"

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

static void install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN + 4, &sa, NULL) != 0) {
		perror("sigaction");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *when = argc > 1 ? argv[1] : "before";
	bool before = strcmp(when, "before") == 0;
	if (before)
		install();
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!before)
		install();
	int raised = 0;
	double sum = 0;
	/* 100 steps of 2 ms: ~40 detours at period=5ms, a signal of the program's own every 10. */
	for (int i = 0; i < 100; i++) {
		compute_us(2000);
		double x = rank + i, s;
		MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += s;
		if (i % 10 == 0) {
			raise(SIGRTMIN + 4);
			raised++;
		}
	}
	MPI_Finalize();
	/* After MPI_Finalize the handler must still be the program's: reset to the default, this
	 * signal killed the program. */
	raise(SIGRTMIN + 4);
	raised++;
	printf("result rank %d sum %.0f\n", rank, sum);
	printf("rank %d %s raised %d handled %d\n", rank, when, raised, (int)handled);
	return handled >= raised ? 0 : 1;
}
