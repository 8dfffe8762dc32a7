/**
 * The same rule where only a pattern can say it (a JSON Schema `pattern` on a URL as typed, which
 * no URL parser has normalized): the host as written, lower case, `localhost` or a name under it,
 * dotted-decimal 127.x.y.z, or `[::1]`. Every host it matches is loopback by isLoopbackHost (a
 * test holds that); it matches fewer spellings, never more (`http://127.1/` is refused by it).
 */
export const LOOPBACK_HOST_PATTERN =
  '(?:[a-z0-9-]+\\.)*localhost|127(?:\\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|\\[::1\\]';
