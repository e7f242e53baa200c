"""A sandboxed job's own setup in its process, right after it was forked or cloned
(:mod:`.sandbox`'s docstring says what each step is for).  Standard library only,
and nothing of this package: a warm image (:mod:`.warm`) runs this module's text
as it is, outside the package."""
import ctypes
import math
import os
import resource
import signal

CLONE_NEWIPC = 0x08000000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
_libc = ctypes.CDLL(None, use_errno=True)
# Set in the zygote once it has namespaces: every job then gets an IPC namespace of its own
# (enter_child), so SysV segments, queues, semaphores and POSIX queues die with the job.
JOB_IPC_NAMESPACE = [False]


def enter_child(jobdir, uid, fds, env, rlimits, processes):
    """The sandboxed child's own setup, right after the fork: session, fds
    (``{target: source}``; everything else closed), working directory,
    environment, rlimits, uid.  Raises on failure (the runner reports it as a
    setup failure, which is the harness's fault, not the job's)."""
    os.setsid()
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    for target, source in fds.items():
        os.dup2(source, target)
    os.closerange(max(fds) + 1, 1 << 16)
    os.chdir(jobdir)
    if JOB_IPC_NAMESPACE[0]:
        # Before the uid drop (it needs CAP_SYS_ADMIN): what the job makes with shmget, msgget,
        # semget or mq_open lives in this namespace and is gone with its last process.
        if _libc.unshare(CLONE_NEWIPC) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"unshare(ipc): {os.strerror(err)}")
    os.environ.clear()
    os.environ.update(env)
    for which, value in rlimits.items():
        resource.setrlimit(which, value if isinstance(value, tuple) else (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if uid is not None:
        # Counts the uid's threads too: a JVM needs a few dozen.
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def base_env(jobdir):
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": jobdir, "TMPDIR": jobdir, "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def enter_job(job, jobdir, uid, fds):
    """A command job's setup (:func:`enter_child` with the job's limits and
    environment), for an exec (``command.run_child``) and a warm start (:mod:`.warm`)
    alike; returns the job's environment."""
    lim = job["limits"]
    env = {**base_env(jobdir), **job["env"]}
    enter_child(jobdir, uid, fds, env,
                # SIGXCPU at the limit (a clear "CPU limit" signal), SIGKILL a second later.
                {resource.RLIMIT_CPU: (max(1, math.ceil(lim["cpu_seconds"])), max(1, math.ceil(lim["cpu_seconds"])) + 1),
                 resource.RLIMIT_AS: lim["memory_mb"] << 20, resource.RLIMIT_FSIZE: lim["file_bytes"]},
                lim["processes"])
    return env
