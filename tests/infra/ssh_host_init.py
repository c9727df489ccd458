"""PID 1 of one test "login node" (started by tests/infra/ssh_hosts.py inside its own namespaces).

It takes the host's name, binds the host's own machine id and /var/tmp over the machine's, runs sshd
in the foreground, reaps every orphan (it is the namespace's init) and ends when sshd ends or when it
is sent SIGTERM; the kernel then kills whatever else is left in the PID namespace.

Run with the system python3, standard library only: ``ssh_host_init.py NAME HOSTDIR``.
"""

import os
import signal
import socket
import subprocess
import sys


def main() -> int:
    name, hostdir = sys.argv[1], sys.argv[2]
    socket.sethostname(name)
    binds = [(f"{hostdir}/machine-id", "/etc/machine-id"), (f"{hostdir}/hostname", "/etc/hostname"),
             (f"{hostdir}/var-tmp", "/var/tmp")]
    if os.path.exists("/var/lib/dbus/machine-id"):
        binds.append((f"{hostdir}/machine-id", "/var/lib/dbus/machine-id"))
    for source, target in binds:
        subprocess.run(["mount", "--bind", source, target], check=True)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", f"{hostdir}/sshd_config", "-E", f"{hostdir}/sshd.log"])
    signal.signal(signal.SIGTERM, lambda *_: sshd.terminate())
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if pid == sshd.pid:
            return 0


if __name__ == "__main__":
    sys.exit(main())
