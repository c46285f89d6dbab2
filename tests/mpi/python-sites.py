# The Python call-site test's program (test-python.sh): N rounds of an upper-case (buffer)
# Allreduce and a lower-case (pickled) allreduce, the latter also through an attribute chain
# and through a variable (no method call), each at a line marked "# site X"; writes each
# rank's results to RESULTS/rank-R (the environment's RESULTS; printed without it: the
# launcher may merge two ranks' lines), which must be the same with the library preloaded. With "kill" after N, rank 1
# kills itself after the rounds and rank 0 waits in a barrier until the launcher ends it.
import os
import signal
import sys
from array import array

from mpi4py import MPI


def rounds(comm, n):
    total = 0
    buf, one = array("d", [0.0]), array("d", [0.0])
    for i in range(n):
        one[0] = float(i)
        comm.Allreduce(one, buf, op=MPI.SUM)  # site A
        total += comm.allreduce(i, op=MPI.SUM)  # site B
        total += MPI.COMM_WORLD.allreduce(i, op=MPI.SUM)  # site D
        f = comm.allreduce
        total += f(i, op=MPI.SUM)  # site E
    return buf[0], total


comm = MPI.COMM_WORLD
n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
last, total = rounds(comm, n)
line = f"rank {comm.rank}: last {last} total {total}\n"
if os.environ.get("RESULTS"):
    with open(os.path.join(os.environ["RESULTS"], f"rank-{comm.rank}"), "w") as out:
        out.write(line)
else:
    print(line, end="", flush=True)
if sys.argv[2:] == ["kill"]:
    comm.Barrier()  # site C
    if comm.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    comm.Barrier()
