"""Drives kvrepl through a pseudo-terminal, as a person would: the prompt, a command,
history recall (up arrow), tab completion of a command and of a key, the question repair asks,
and UTF-8 typed at the prompt ("Tromsø", with no locale in the environment: libedit drops
non-ASCII bytes in the C locale, so kvrepl must choose a UTF-8 character type).

Usage: interactive_kvrepl.py KVREPL DBPATH HISTORYFILE   (exit 0 when every step was seen)
"""
import os
import pty
import select
import sys
import time

binary, db, history = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.environ["KVREPL_HISTORY"] = history
    os.environ["TERM"] = "xterm"
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        os.environ.pop(name, None)
    os.execv(binary, [binary, db, "--create"])

output = b""


def read_until(marker, count=1, timeout=15):
    global output
    deadline = time.time() + timeout
    while output.count(marker) < count:
        left = deadline - time.time()
        if left <= 0:
            sys.exit(f"timed out waiting for {marker!r}; output so far:\n{output.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                output += os.read(fd, 4096)
            except OSError:
                break


def send(text):
    os.write(fd, text.encode())


read_until(b"kvrepl> ")
send("put greeting hello\r")
read_until(b"OK")
read_until(b"kvrepl> ", 2)
send("get greeting\r")
read_until(b"hello", 2)                 # the command echo and the value
read_until(b"kvrepl> ", 3)
send("\x1b[A\r")                        # up arrow: recall "get greeting", run it again
read_until(b"hello", 3)
read_until(b"kvrepl> ", 4)
send("stat\t\r")                        # tab completes the command "stats"
read_until(b"files per level")
read_until(b"kvrepl> ", 5)
send("get gree\t\r")                    # tab completes the key "greeting"
read_until(b"hello", 4)
read_until(b"kvrepl> ", 6)
send("repair\r")                        # asks first; "n" changes nothing
read_until(b"[y/N] ")
send("n\r")
read_until(b"nothing repaired")
read_until(b"kvrepl> ", 7)
send("repair\r")                        # "y" repairs, and the session goes on
read_until(b"[y/N] ", 2)
send("y\r")
read_until(b"repaired ")
read_until(b"kvrepl> ", 8)
send("get greeting\r")
read_until(b"hello", 5)
read_until(b"kvrepl> ", 9)
send("put city Tromsø\r")               # typed UTF-8 arrives whole
read_until(b"OK", 2)
read_until(b"kvrepl> ", 10)
send("get city\r")
read_until("Tromsø".encode(), 2)        # the echo and the value
read_until(b"kvrepl> ", 11)
send("quit\r")
_, status = os.waitpid(pid, 0)
with open(history) as f:
    saved = f.read()
if "get greeting" not in saved.replace("\\040", " "):
    sys.exit("history was not saved: " + saved)
print("interactive session ok")
sys.exit(os.WEXITSTATUS(status))
