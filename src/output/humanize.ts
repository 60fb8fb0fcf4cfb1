// Values as people read them in a terminal table: `45.8 MB`, `5m ago`, `in 2h`. --json and pipes keep exact values.

const UNITS = ['kB', 'MB', 'GB', 'TB', 'PB'];

/** Decimal units, as `ls -h --si`, `du --si` and gh print them: 999 B, 1.0 kB, 45.8 MB. */
export function humanBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  let value = bytes;
  let unit = -1;
  while (value >= 999.95 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

const STEPS: [number, string, number][] = [
  [1, 's', 60],
  [60, 'm', 60],
  [3600, 'h', 24],
  [86400, 'd', 30],
];

/**
 * How long ago (or from now) an RFC 3339 time is, rounded to the nearest unit (`--ttl 2h` a moment later is
 * `in 2h`, not `in 1h`): `12s ago`, `5m ago`, `in 2h`, `3d ago`; the date beyond 30 days.
 */
export function relativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const past = then <= now;
  const seconds = Math.abs(now - then) / 1000;
  if (seconds < 1) return 'now';
  for (const [unit, name, next] of STEPS) {
    const amount = Math.round(seconds / unit);
    if (amount < next) return past ? `${amount}${name} ago` : `in ${amount}${name}`;
  }
  return iso.slice(0, 10);
}
