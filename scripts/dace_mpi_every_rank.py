"""pytest plugin for DaCe's MPI tests (`scripts/dace-mpi-tests.py
--every-rank-compiles`): every rank compiles, all at once, into one build
folder.

DaCe's `dace.sdfg.utils.distributed_compile` compiles on rank 0 and loads
rank 0's library on the others. Here rank 0's SDFG is broadcast (as JSON,
which is what the others would load from rank 0's folder) and every rank
calls `SDFG.compile()` at the same moment (after a barrier), as an
application whose ranks all compile does: the same program, the same
`.dacecache/<name>` folder, one cache (issue 42). The tests that compile on
each rank in turn (`for r in range(size): if r == rank: sdfg.compile()`)
are unchanged.
"""


def pytest_configure(config):
    import dace
    from dace.sdfg import utils

    def distributed_compile(sdfg, comm, validate=True):
        rank = comm.Get_rank()
        data = comm.bcast(sdfg.to_json() if rank == 0 else None, root=0)
        if rank != 0:
            sdfg = dace.SDFG.from_json(data)
        comm.Barrier()
        func = sdfg.compile(validate=validate)
        comm.Barrier()
        return func

    utils.distributed_compile = distributed_compile
