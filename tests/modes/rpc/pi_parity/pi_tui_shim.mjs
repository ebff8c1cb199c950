// pi's RpcClient runs `node <cliPath> --mode rpc ...`. This cliPath runs pi-tui instead:
// PI_TUI_COMMAND (a JSON array, e.g. ["/path/python", "-m", "pi_tui"]) gets the same arguments
// and the same stdin/stdout/stderr; signals are passed on and the exit status is pi-tui's.
import { spawn } from "node:child_process";

const command = JSON.parse(process.env.PI_TUI_COMMAND);
const child = spawn(command[0], [...command.slice(1), ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + ({ SIGTERM: 15, SIGINT: 2, SIGHUP: 1 }[signal] ?? 0) : 1)));
