/**
 * The attack suite's Go peer (peers/tlspeer, built by scripts/tls_peer.sh into the peers
 * cache): a client that presents any chain with any key, and an oracle of upstream's client
 * certificate checks to measure the expected answers against.
 */
import type { TestPair } from "../../src/server/testing.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** What a request got: an HTTP status, or `handshake` when the connection ended without one. */
export type Outcome = number | "handshake";

/** The peer binary's path (built on first use). */
export async function tlsPeer(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/tls_peer.sh`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  if (!out.success) {
    throw new Error(`scripts/tls_peer.sh failed: ${text.decode(out.stderr)}`);
  }
  return text.decode(out.stdout).trim();
}

/** What a client presents: a chain (leaf first) and the key it signs the handshake with. */
export interface Presented {
  chainPem: string;
  keyPem: string;
}

/** Files of one presented pair, written once into `dir`. */
async function writePresented(
  dir: string,
  name: string,
  presented: Presented,
): Promise<string[]> {
  const cert = `${dir}/${name}.crt`;
  const key = `${dir}/${name}.key`;
  await Deno.writeTextFile(cert, presented.chainPem);
  await Deno.writeTextFile(key, presented.keyPem);
  return ["-cert", cert, "-key", key];
}

/** One request through the peer; its status and body, or the error that ended it. */
export async function peerGet(
  peer: string,
  url: string,
  options: {
    dir: string;
    name?: string;
    presented?: Presented;
    token?: string;
    tls?: "1.2" | "1.3";
  },
): Promise<{ outcome: Outcome; body: string }> {
  const args = ["get", "-url", url];
  if (options.presented) {
    args.push(
      ...await writePresented(
        options.dir,
        options.name ?? "client",
        options.presented,
      ),
    );
  }
  if (options.token) args.push("-token", options.token);
  if (options.tls) args.push("-tls", options.tls);
  const out = await new Deno.Command(peer, { args, stdout: "piped" }).output();
  const line = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    status?: number;
    body?: string;
    error?: string;
  };
  return line.status
    ? { outcome: line.status, body: line.body ?? "" }
    : { outcome: "handshake", body: line.error ?? "" };
}

/** A running oracle; dispose to stop it. */
export interface Oracle extends AsyncDisposable {
  url: string;
}

/** Starts the oracle of upstream's checks with `caFile` as the client CA bundle. */
export async function startOracle(
  peer: string,
  dir: string,
  caFile: string,
  serving: TestPair,
): Promise<Oracle> {
  await Deno.writeTextFile(`${dir}/oracle.crt`, serving.certPem);
  await Deno.writeTextFile(`${dir}/oracle.key`, serving.keyPem);
  const child = new Deno.Command(peer, {
    args: [
      "serve",
      "-ca",
      caFile,
      "-cert",
      `${dir}/oracle.crt`,
      "-key",
      `${dir}/oracle.key`,
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the TLS oracle stopped before listening");
    first += value;
  }
  reader.releaseLock();
  return {
    url: `https://127.0.0.1:${first.trim()}`,
    async [Symbol.asyncDispose]() {
      await child.stdin.close();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}
