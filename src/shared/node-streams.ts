// Whether this process has loaded Node's streams: node:net loads them (a writer's lock socket, journal/dir/lock/
// lock-socket.ts). Loading node:zlib costs ~2 ms of CPU in a fresh process, most of it those streams; past them it
// costs less than the JavaScript CRC-32's tables and its cold loop over a small index log (derived/checksum.ts).
let loaded = false;

/** Said by the module that loads node:net, right after it does. */
export function noteStreamsLoaded(): void {
  loaded = true;
}

/** Whether Node's streams are loaded in this process (then node:zlib is cheap to load). */
export const streamsLoaded = (): boolean => loaded;
