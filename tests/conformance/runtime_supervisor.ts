/**
 * What systemd's `Restart=always` does for containerd on upstream's node e2e hosts: the
 * suite's "recover from ip leak" test kills the runtime with SIGKILL and expects something
 * to start it again within its 20 s pause. The harness has no systemd, so this loop watches
 * the runtime's pid file and starts containerd again (scripts/cri_env.sh up) when the
 * process named there is gone.
 */

/**
 * True when the runtime named by the pid file is not running: no pid file, a pid that is no
 * number, or a process whose command line (from /proc, NULs as given) is gone or does not
 * name the runtime's own configuration file. A killed process that nobody has reaped yet
 * keeps its pid but has an empty command line, so that counts as gone too.
 */
export function runtimeGone(
  pidFileText: string | null,
  cmdline: string | null,
  configPath: string,
): boolean {
  if (pidFileText === null || !/^\s*\d+\s*$/.test(pidFileText)) return true;
  if (cmdline === null) return true;
  return !cmdline.split("\0").includes(configPath);
}

export interface RuntimeSupervisor {
  /** Stops watching; waits for a restart in progress to end. */
  stop(): Promise<void>;
  /** How many times the runtime was started again. */
  restarts(): number;
}

function readOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/**
 * Checks every `intervalMs` whether the runtime of `pidFile` still runs and calls `restart`
 * when it does not. A failed restart is reported through `log` and tried again on the next
 * check.
 */
export function superviseRuntime(opts: {
  pidFile: string;
  configPath: string;
  restart: () => Promise<void>;
  intervalMs?: number;
  log?: (msg: string) => void;
}): RuntimeSupervisor {
  const interval = opts.intervalMs ?? 1000;
  const log = opts.log ??
    // deno-lint-ignore no-console
    ((m: string) => console.error(m));
  let stopped = false;
  let count = 0;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      const text = readOrNull(opts.pidFile);
      const pid = text?.trim() ?? "";
      const cmdline = /^\d+$/.test(pid)
        ? readOrNull(`/proc/${pid}/cmdline`)
        : null;
      if (runtimeGone(text, cmdline, opts.configPath)) {
        try {
          await opts.restart();
          count++;
          log(
            `the container runtime (pid file ${opts.pidFile}) was gone: started again`,
          );
        } catch (e) {
          log(
            `the container runtime (pid file ${opts.pidFile}) is gone and could not be started again: ${
              e instanceof Error ? e.message : e
            }`,
          );
        }
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, interval);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return {
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await loop;
    },
    restarts: () => count,
  };
}
