/**
 * Pod subnets for tests that start a containerd of their own with a CNI bridge. A subnet
 * another bridge on the host already routes (a leftover of a stopped run, another test's
 * instance) makes pod IPs unreachable, so each one is taken from a pool no fixed test subnet
 * uses, skipping every /16 the host routes, and held by a claim file until it is released.
 */

/** `10.<n>.0.0/16` for n in this range: the fixed subnets of other tests lie below it. */
const POOL_FIRST = 200;
const POOL_LAST = 254;
const CLAIMS = "/tmp/kts-subnet-claims";

/** A claimed `10.<n>.0.0/16`; disposing it releases the claim. */
export interface ClaimedSubnet extends AsyncDisposable {
  subnet: string;
}

/** The second octets of the 10.x.0.0/16 networks a route of `/proc/net/route` touches. */
export function routedSecondOctets(routeTable: string): Set<number> {
  const taken = new Set<number>();
  for (const line of routeTable.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    // little-endian hex: the first byte printed last
    const octets = (hex: string) =>
      [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const dest = octets(fields[1]!);
    const mask = octets(fields[7]!);
    if (mask[0] !== 255 || dest[0] !== 10) {
      // a route wider than a /8 (the default route) or outside 10/8 never hides a pod subnet
      continue;
    }
    if (mask[1] !== 255) {
      // wider than a /16 inside 10/8: every /16 under it is taken
      const span = 256 - mask[1]!;
      for (let n = dest[1]! & mask[1]!; n < (dest[1]! & mask[1]!) + span; n++) {
        taken.add(n);
      }
      continue;
    }
    taken.add(dest[1]!);
  }
  return taken;
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** Takes the claim file of `n` unless a live process holds it. */
async function tryClaim(n: number): Promise<boolean> {
  const path = `${CLAIMS}/10.${n}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = await Deno.open(path, { write: true, createNew: true });
      await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
      file.close();
      return true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      const holder = Number(
        (await Deno.readTextFile(path).catch(() => "")).trim(),
      );
      if (holder > 0 && alive(holder)) return false;
      // the process that claimed it is gone: the claim is stale
      await Deno.remove(path).catch(() => {});
    }
  }
  return false;
}

/**
 * Claims a free `10.<n>.0.0/16` (n in 200..254): not routed on the host and not claimed by a
 * live test process. Throws naming the routes and claims when none is left.
 */
export async function claimSubnet(): Promise<ClaimedSubnet> {
  await Deno.mkdir(CLAIMS, { recursive: true });
  const routed = routedSecondOctets(
    await Deno.readTextFile("/proc/net/route"),
  );
  const size = POOL_LAST - POOL_FIRST + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const n = POOL_FIRST + (start + i) % size;
    if (routed.has(n) || !(await tryClaim(n))) continue;
    return {
      subnet: `10.${n}.0.0/16`,
      async [Symbol.asyncDispose]() {
        await Deno.remove(`${CLAIMS}/10.${n}`).catch(() => {});
      },
    };
  }
  throw new Error(
    `no free test subnet in 10.${POOL_FIRST}-${POOL_LAST}.0.0/16: all are routed on this host or claimed in ${CLAIMS}; remove leftover CNI bridges (ip link del <bridge>) or stale claim files`,
  );
}
