"""mpi4py's test_exceptions in small: calls that MPI refuses (mpi4py sets MPI_ERRORS_RETURN and
raises MPI.Exception) on every rank -- the frees of predefined handles, a refused constructor,
a refused collective -- then N rounds of allreduces on COMM_WORLD and on a duplicate. Rank 0
prints each call's outcome and the results, which must not depend on a tool.

    refused.py [N]
"""
import sys
from array import array

from mpi4py import MPI


def attempt(what, call):
    try:
        call()
    except MPI.Exception as e:
        outcome = f"refused, class {e.Get_error_class()}"
    else:
        outcome = "done"
    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"{what}: {outcome}", flush=True)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
comm = MPI.COMM_WORLD
attempt("COMM_WORLD.Free", MPI.COMM_WORLD.Free)
attempt("COMM_SELF.Free", MPI.COMM_SELF.Free)
attempt("INT.Free", MPI.INT.Free)
attempt("REQUEST_NULL.Free", MPI.REQUEST_NULL.Free)
attempt("COMM_WORLD.Create(GROUP_NULL)", lambda: comm.Create(MPI.GROUP_NULL))
attempt("COMM_WORLD.Bcast(root=-7)", lambda: comm.Bcast(array("i", [0]), root=-7))
dup = comm.Dup()
x, y = array("i", [comm.Get_rank() + 1]), array("i", [0])
total = 0
for i in range(n):
    comm.Allreduce(x, y, op=MPI.SUM)
    total += y[0]
    dup.Allreduce(x, y, op=MPI.SUM)
    total += y[0]
dup.Free()
if comm.Get_rank() == 0:
    print(f"rounds {n} total {total}", flush=True)
