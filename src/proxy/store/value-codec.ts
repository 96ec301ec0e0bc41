// JSON with two tagged extensions (bigint, bytes), so records keep amounts and field elements exact.

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON ran, so Buffers are seen as bytes, not as {type, data}.
  const original = this[key];
  if (typeof original === 'bigint') return { $bigint: original.toString() };
  if (original instanceof Uint8Array) return { $bytes: Buffer.from(original).toString('base64') };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$bigint') return BigInt((value as { $bigint: string }).$bigint);
    if (keys.length === 1 && keys[0] === '$bytes') {
      return new Uint8Array(Buffer.from((value as { $bytes: string }).$bytes, 'base64'));
    }
  }
  return value;
}

export function encodeValue(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ v: value }, replacer));
}

export function decodeValue<T>(bytes: Uint8Array): T {
  return (JSON.parse(new TextDecoder().decode(bytes), reviver) as { v: T }).v;
}
