// A test tool written for no host in particular: plain typed exports of the
// world `js-plain` (wit/world.wit), no toolhost SDK. ComponentizeJS serves
// the world's functions from the module's exports and the interface `hosts`
// from the exported object `hosts`.

export function convert(r, to) {
  if (r.unit === to) {
    return r;
  }
  const value = to === 'fahrenheit' ? r.value * 9 / 5 + 32 : (r.value - 32) * 5 / 9;
  return { value, unit: to };
}

export function total(values) {
  return values.reduce((sum, v) => sum + v, 0n);
}

export const hosts = {
  hostOf(url) {
    try {
      return new URL(url).host;
    } catch {
      throw `not a URL: ${url}`;
    }
  },
};
