#!/usr/bin/env bash
# Toad (batrachian-toad, the Textual ACP client) drives `pi-tui --mode acp`, in tmux, and what a
# person sees is checked on Toad's screen (tmux capture-pane).
#
# Not part of `make test`: Toad needs Python >= 3.14, which CI and this project's machines need
# not have, so this builds a throwaway Debian sid chroot holding python3.14, Toad and pi-tui (the
# committed HEAD, `git archive`). It needs root, debootstrap and tmux on the host, and the network
# to Debian and PyPI for the first run (~5 min; later runs reuse the chroot, ~1.5 min).
#
#   sudo tests/manual/toad_check.sh            # chroot in $TOAD_ROOT (default /work/toadroot)
#   TOAD_KEEP=1 tests/manual/toad_check.sh     # leave Toad's tmux session open to look (tmux -L toad-check attach)
#   rm -rf /work/toadroot                      # when done (after the script, nothing is mounted there)
#
# pi-tui talks to the fake OpenAI-compatible server (pi_tui.testing.fake_server, on 127.0.0.1,
# run inside the chroot) with a script of four turns: a streamed thought and a `bash` call, the
# answer; an `edit` of hello.py, the answer; `rm hello.py`, the answer. The check answers Toad's
# permission questions with `a` (Allow), `a`, then `r` (Reject), and fails unless: the question
# shows pi-tui's four options, the command's output and the answer appear, the edit's question
# shows the diff, the file is edited (through Toad's fs/write_text_file), the rejected `rm` did
# not run, `/` lists pi-tui's commands, and the session file holds the turns.
# Screens are written to $TOAD_SCREENS (default /tmp/toad-check) as text.
set -euo pipefail

ROOT=${TOAD_ROOT:-/work/toadroot}
SCREENS=${TOAD_SCREENS:-/tmp/toad-check}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
REPO=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
TMUX_SOCKET=toad-check
FAKE_PID=""
MOUNTED=()

die() { echo "toad_check: $*" >&2; exit 1; }
in_root() { chroot "$ROOT" env -i HOME=/root TERM=xterm-256color LANG=C.UTF-8 PATH=/opt/pitui/bin:/usr/bin:/bin \
    PIP_CERT=/etc/ssl/certs/host-ca-bundle.crt PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"; }

cleanup() {
    if [ -z "${TOAD_KEEP:-}" ]; then tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true; fi
    if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null || true; fi
    if [ -z "${TOAD_KEEP:-}" ]; then
        for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do umount "${MOUNTED[i]}" 2>/dev/null || true; done
    fi
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "needs debootstrap: apt-get install debootstrap"
command -v tmux >/dev/null || die "needs tmux"
mkdir -p "$SCREENS"

# ---------------------------------------------------------------- the chroot
if [ ! -x "$ROOT/usr/bin/python3.14" ]; then
    echo "toad_check: debootstrap Debian sid into $ROOT (~2.5 min)"
    debootstrap --variant=minbase --include=python3.14,python3.14-venv,ca-certificates sid "$ROOT" "$MIRROR" \
        > "$SCREENS/debootstrap.log" 2>&1 || die "debootstrap failed: $SCREENS/debootstrap.log"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# A proxied network's CA (the host trusts it; the chroot's own bundle does not know it).
cp "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" "$ROOT/etc/ssl/certs/host-ca-bundle.crt"
for d in proc dev dev/pts; do
    if ! mountpoint -q "$ROOT/$d"; then mount --bind "/$d" "$ROOT/$d"; MOUNTED+=("$ROOT/$d"); fi
done
if [ ! -x "$ROOT/opt/toad/bin/toad" ]; then
    echo "toad_check: pip install batrachian-toad"
    in_root sh -c 'python3.14 -m venv /opt/toad && /opt/toad/bin/pip install -q batrachian-toad' \
        || die "Toad did not install"
fi
PITUI_REV=$(git -C "$REPO" rev-parse --short HEAD)
echo "toad_check: pi-tui $PITUI_REV into the chroot"
rm -rf "$ROOT/opt/pi-tui-src" && mkdir -p "$ROOT/opt/pi-tui-src"
git -C "$REPO" archive HEAD | tar -x -C "$ROOT/opt/pi-tui-src"
if [ -x "$ROOT/opt/pitui/bin/pi-tui" ]; then
    in_root /opt/pitui/bin/pip install -q --force-reinstall --no-deps /opt/pi-tui-src
else
    in_root sh -c 'python3.14 -m venv /opt/pitui && /opt/pitui/bin/pip install -q /opt/pi-tui-src'
fi
TOAD_VERSION=$(in_root /opt/toad/bin/pip show batrachian-toad | awk '/^Version/{print $2}')

# ---------------------------------------------------------------- the demo project and the fake model
rm -rf "$ROOT/root/demo" "$ROOT/root/.pi" "$ROOT/root/toad-script.json"
mkdir -p "$ROOT/root/demo" "$ROOT/root/.pi/agent"
echo 'print("hello from the demo project")' > "$ROOT/root/demo/hello.py"
cat > "$ROOT/root/toad-script.json" <<'EOF'
[{"thinking": "The user wants to know what is in this folder. I will list it.",
  "tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "ls -la && cat hello.py"}}]},
 {"text": "This folder holds one file, hello.py, which prints a greeting. Anything else?"},
 {"tool_calls": [{"id": "call_2", "name": "edit", "arguments": {"path": "hello.py", "edits": [
     {"oldText": "hello from the demo project", "newText": "hello, world"}]}}]},
 {"text": "Done: hello.py now prints hello, world."},
 {"tool_calls": [{"id": "call_3", "name": "bash", "arguments": {"command": "rm hello.py"}}]},
 {"text": "Understood: I left hello.py alone."}]
EOF
# chroot (not a shell function) in the background: $! is the server itself (chroot and env exec it)
chroot "$ROOT" env -i HOME=/root PATH=/usr/bin:/bin \
    /opt/pitui/bin/python -m pi_tui.testing.fake_server --script /root/toad-script.json \
    > "$SCREENS/fake-server.out" 2>&1 &
FAKE_PID=$!
for _ in $(seq 100); do grep -q '^PORT' "$SCREENS/fake-server.out" && break; sleep 0.1; done
PORT=$(awk '/^PORT/{print $2}' "$SCREENS/fake-server.out")
[ -n "$PORT" ] || die "the fake server did not start: $SCREENS/fake-server.out"
cat > "$ROOT/root/.pi/agent/models.json" <<EOF
{"providers": {"fake": {"baseUrl": "http://127.0.0.1:$PORT/v1", "api": "openai-completions", "apiKey": "fake-key",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
  "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000, "reasoning": true}]}}}
EOF

# ---------------------------------------------------------------- Toad in tmux
screen() { tmux -L "$TMUX_SOCKET" capture-pane -p -t toad; }
keys() { tmux -L "$TMUX_SOCKET" send-keys -t toad "$@"; }
wait_for() {  # wait_for TEXT NAME: until TEXT is on screen (60 s), then save the screen as NAME
    for _ in $(seq 300); do
        if screen | grep -aqF -- "$1"; then screen > "$SCREENS/$2.txt"; return 0; fi
        sleep 0.2
    done
    screen > "$SCREENS/$2-timeout.txt"
    die "'$1' never appeared on Toad's screen ($SCREENS/$2-timeout.txt)"
}
tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
tmux -L "$TMUX_SOCKET" new-session -d -s toad -x 120 -y 50 \
    "chroot '$ROOT' env -i HOME=/root TERM=xterm-256color LANG=C.UTF-8 PATH=/opt/pitui/bin:/usr/bin:/bin \
     sh -c 'cd /root/demo && /opt/toad/bin/toad acp \"pi-tui --mode acp\" .'"

send() {  # send TEXT: type it into Toad's prompt and submit (again while Toad is still starting the agent)
    keys "$1"; sleep 0.5; keys Enter
    for _ in $(seq 30); do
        sleep 1
        screen | grep -aqF "❯ $1" || return 0  # left the input box: sent
        screen | grep -aqF "▊ ❯ $1" || return 0
        keys Enter
    done
    die "Toad did not take the prompt '$1'"
}
wait_for "How can I help" 0-start
wait_for "pi-tui" 0-start
send "What is in this folder?"
wait_for "Always reject bash" 1-bash-question
for option in "a Allow" "A Always allow bash" "r Reject" "R Always reject bash"; do
    grep -aqF "$option" "$SCREENS/1-bash-question.txt" || die "the question lacks '$option'"
done
keys a
wait_for "Anything" 2-bash-answer
grep -aqF 'print("hello from the demo project")' "$SCREENS/2-bash-answer.txt" || die "bash's output is not shown"
grep -aqF 'ls -la && cat hello.py' "$SCREENS/2-bash-answer.txt" || die "the tool call is not shown"

send "Make it greet the world."
wait_for "Always reject edit" 3-edit-question
wait_for "hello, world" 3-edit-question  # Toad's approval screen: the options, then the diff beside them
keys a
wait_for "Done: hello.py" 4-edit-answer
grep -aqF 'print("hello, world")' "$ROOT/root/demo/hello.py" || die "hello.py was not edited"

send "Delete it."
wait_for "Always reject bash" 5-reject-question
keys r
wait_for "hello.py alone." 6-reject-answer
[ -f "$ROOT/root/demo/hello.py" ] || die "the rejected rm ran: hello.py is gone"

keys "/"
wait_for "/compact" 7-commands
grep -aqF "/skill:" "$SCREENS/7-commands.txt" || die "/ does not list pi-tui's skills"
keys BSpace

if [ -n "${TOAD_KEEP:-}" ]; then
    echo "toad_check: Toad left running: tmux -L $TMUX_SOCKET attach"
else
    keys C-q
    for _ in $(seq 50); do tmux -L "$TMUX_SOCKET" has-session -t toad 2>/dev/null || break; sleep 0.2; done
fi
SESSION_FILE=$(find "$ROOT/root/.pi/agent/sessions" -name '*.jsonl' | head -n 1)
[ -n "$SESSION_FILE" ] || die "pi-tui saved no session"
grep -q '"call_2"' "$SESSION_FILE" || die "the session file lacks the edit ($SESSION_FILE)"
grep -q 'The user rejected this bash call' "$SESSION_FILE" || die "the session file lacks the rejection"
echo "toad_check: PASS — Toad $TOAD_VERSION drove pi-tui $PITUI_REV:" \
     "bash and edit asked, allowed, run; rm asked, rejected, not run; answers shown; / lists the commands; session ${SESSION_FILE#"$ROOT"}"
echo "toad_check: screens in $SCREENS"
