/**
 * A small load generator for the kubelet API, run by bench/cluster_bench.ts in its own
 * process (so it does not share the bench's event loop) with
 * `--unsafely-ignore-certificate-errors=127.0.0.1`: the kubelets serve self-signed
 * certificates. `concurrency` workers GET `url` back to back for `seconds`, presenting the
 * client certificate; prints `{"ok": n, "failed": n, "seconds": s}`.
 *
 * Usage: `deno run -A --unsafely-ignore-certificate-errors=127.0.0.1 bench/_kubelet_load.ts
 *   <url> <seconds> <concurrency> <cert file> <key file>`
 *
 * @module
 */
// deno-lint-ignore-file no-console

const [url, seconds, concurrency, certFile, keyFile] = Deno.args;
if (!url || !seconds || !concurrency || !certFile || !keyFile) {
  console.error(
    "usage: _kubelet_load.ts <url> <seconds> <concurrency> <cert> <key>",
  );
  Deno.exit(2);
}
const client = Deno.createHttpClient({
  cert: await Deno.readTextFile(certFile),
  key: await Deno.readTextFile(keyFile),
});
let ok = 0;
let failed = 0;
const t0 = performance.now();
const end = t0 + Number(seconds) * 1000;
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (performance.now() < end) {
      try {
        const res = await fetch(url, { client });
        await res.arrayBuffer();
        if (res.ok) ok++;
        else failed++;
      } catch {
        failed++;
      }
    }
  }),
);
console.log(
  JSON.stringify({ ok, failed, seconds: (performance.now() - t0) / 1000 }),
);
client.close();
