// A small strict JSON body reader: the media type must be application/json (UTF-8), the body at most
// `maxBytes`, and the text valid JSON holding an object, with no member name repeated within one object
// (at any depth) and at most MAX_JSON_DEPTH levels of nesting. Anything else is refused with a clear 4xx.
import type { IncomingMessage } from 'node:http';
import { visit } from 'jsonc-parser';
import { ProblemError } from '../api/problem.ts';

/** Deepest nesting of objects/arrays a request body may have (the API's bodies are flat). */
export const MAX_JSON_DEPTH = 32;

export function checkJsonContentType(header: string | undefined): void {
  if (header === undefined || header === '') {
    throw new ProblemError(
      'unsupported_media_type',
      'requests with a body must carry Content-Type: application/json',
    );
  }
  const [mediaType, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') {
    throw new ProblemError(
      'unsupported_media_type',
      `Content-Type must be application/json, got "${header.slice(0, 100)}"`,
    );
  }
  for (const param of params) {
    if (param.startsWith('charset=') && !['utf-8', 'utf8', '"utf-8"'].includes(param.slice(8))) {
      throw new ProblemError('unsupported_media_type', 'JSON bodies must be UTF-8');
    }
  }
}

/** Reads at most `maxBytes` from the request; past that it stops buffering and answers 413. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume(); // discard; the response closes the connection
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new ProblemError('invalid_request', `request body could not be read: ${error.message}`));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(maxBytes: number): ProblemError {
  return new ProblemError('payload_too_large', `request body exceeds ${maxBytes} bytes`, {
    headers: { Connection: 'close' },
  });
}

/**
 * The body as text, refused unless it is UTF-8 and, as far as it is JSON, nests at most MAX_JSON_DEPTH
 * levels and repeats no member name: the limits every JSON body of the proxy has (REST and MCP alike).
 */
export function checkedJsonText(body: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new ProblemError('invalid_request', 'request body is not valid UTF-8');
  }
  checkStructure(text);
  return text;
}

/** Parses JSON text strictly; the top-level value must be an object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  const text = checkedJsonText(body);
  if (text.trim() === '')
    throw new ProblemError('invalid_request', 'request body is empty; a JSON object is required');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProblemError('invalid_request', `request body is not valid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProblemError('invalid_request', 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * JSON.parse keeps the last of repeated member names ({"amount":"-5","amount":"0.1"} reads as 0.1), so a
 * body that a validator and a logger or another parser would read differently is refused instead. Names
 * are compared after unescaping ("a" and "\u0061" are the same name). The text is already valid JSON here.
 */
function checkStructure(text: string): void {
  const open: Set<string>[] = [];
  let depth = 0;
  const enter = () => {
    depth += 1;
    if (depth > MAX_JSON_DEPTH) {
      throw new ProblemError(
        'invalid_request',
        `request body is nested deeper than ${MAX_JSON_DEPTH} levels`,
      );
    }
  };
  visit(
    text,
    {
      onObjectBegin: () => {
        enter();
        open.push(new Set());
      },
      onObjectEnd: () => {
        depth -= 1;
        open.pop();
      },
      onArrayBegin: enter,
      onArrayEnd: () => {
        depth -= 1;
      },
      onObjectProperty: (name, _offset, _length, _line, _column, pathSupplier) => {
        const names = open[open.length - 1];
        if (names.has(name)) {
          const where = [...pathSupplier(), name].map(String).join('.');
          throw new ProblemError('invalid_request', `request body repeats the member "${where}"`, {
            issues: [{ path: where, message: 'duplicate member name' }],
          });
        }
        names.add(name);
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
}
