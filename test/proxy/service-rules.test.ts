// The owner's service rules (src/proxy/domain/service-rules.ts) over many spellings of one URL: what a rule
// is stored as, which spellings a deny rule covers (every one a lenient server may route to the denied
// place), which an allow rule covers (the canonical one only), and which paths are refused outright under a
// path rule (an encoded `/`, `\`, `;` or `%`). Each row names the spelling it tries.
import test from 'ava';
import { DomainError } from '../../src/proxy/domain/errors.ts';
import { allows, checkService, denies, parseServicePattern } from '../../src/proxy/domain/service-rules.ts';

const at = (u: string) => new URL(u);
/** The code checkService refuses `url` with under `rules`, or undefined when it may be paid. */
const refusal = (
  rules: { allowedServices?: string[]; deniedServices?: string[] },
  url: string,
): string | undefined => {
  try {
    checkService({ allowedServices: [], deniedServices: [], ...rules }, url);
    return undefined;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${error.code}:${String(error.extra?.rule)}`;
  }
};

test('a rule is stored normalised: an http(s) origin with a canonical path prefix', (t) => {
  const rows: Array<[string, string]> = [
    ['https://API.example.com/', 'https://api.example.com'],
    ['https://api.example.com:443/weather/', 'https://api.example.com/weather'],
    ['http://127.0.0.1:8403/demo', 'http://127.0.0.1:8403/demo'],
    ['http://example.com:80', 'http://example.com'],
    ['https://example.com./x', 'https://example.com/x'],
    ['http://LOCALHOST.:9000/A', 'http://localhost:9000/A'],
    ['https://a.example/%61dmin', 'https://a.example/admin'],
    ['https://a.example/x/../admin', 'https://a.example/admin'],
    ['https://a.example/x/%2e%2E/admin', 'https://a.example/admin'],
    ['https://a.example\\admin', 'https://a.example/admin'],
    ['https://a.ex\tample/ad\nmin', 'https://a.example/admin'],
    ['http://[::1]:8080/x', 'http://[::1]:8080/x'],
    ['https://a.example/caf%c3%a9', 'https://a.example/caf%C3%A9'],
  ];
  for (const [input, stored] of rows) t.is(parseServicePattern(input), stored, JSON.stringify(input));
  for (const bad of [
    'ftp://x.example',
    'https://u:p@x.example',
    'http://a@x.example',
    'https://x.example/?q=1',
    'https://x.example/#f',
    'x.example',
    '',
    'https://x.example/a%2fb',
    'https://x.example/a%5Cb',
    'https://x.example/a;v=1',
    'https://x.example/a%3bv',
    'https://x.example/a%2561',
    'https://x.example/a//b',
  ])
    t.is(typeof parseServicePattern(bad), 'object', `refused: ${JSON.stringify(bad)}`);
});

test('a deny rule covers every spelling a lenient server routes to the denied place', (t) => {
  const deny = 'http://127.0.0.1:8403/admin';
  const covered = [
    'http://127.0.0.1:8403/admin',
    'http://127.0.0.1:8403/admin/',
    'http://127.0.0.1:8403/admin/users?x=1',
    'http://127.0.0.1:8403/%61dmin',
    'http://127.0.0.1:8403/%61%64%6D%69%6E',
    'http://127.0.0.1:8403/ADMIN',
    'http://127.0.0.1:8403/Admin/x',
    'http://127.0.0.1:8403/admin;v=1',
    'http://127.0.0.1:8403/admin;v=1/x',
    'http://127.0.0.1:8403//admin',
    'http://127.0.0.1:8403///admin//x',
    'http://127.0.0.1:8403/x/../admin',
    'http://127.0.0.1:8403/x/%2e%2e/admin',
    'http://127.0.0.1:8403/x/..;/admin',
    'http://127.0.0.1:8403/x/.%2e;/admin',
    'http://127.0.0.1:8403/./admin',
    'http://127.0.0.1:8403\\admin',
    'http://127.0.0.1:8403/ad\tmin',
    'http://127.0.0.1:8403/ad\nmin',
    'http://user@127.0.0.1:8403/admin',
    // every loopback name or address is the same host
    'http://localhost:8403/admin',
    'http://LOCALHOST.:8403/admin',
    'http://localhost..:8403/admin',
    'http://api.localhost:8403/admin',
    'http://127.0.0.2:8403/admin',
    'http://127.1:8403/admin',
    'http://2130706433:8403/admin',
    'http://0x7f.0.0.1:8403/admin',
    'http://0.0.0.0:8403/admin',
    'http://[::1]:8403/admin',
    'http://[0:0:0:0:0:0:0:1]:8403/admin',
    'http://[::ffff:127.0.0.1]:8403/admin',
    'http://[::]:8403/admin',
  ];
  for (const url of covered) t.true(denies(deny, at(url)), `denied: ${JSON.stringify(url)}`);
  const beside = [
    'http://127.0.0.1:8403/administrator',
    'http://127.0.0.1:8403/weather',
    'http://127.0.0.1:8403/',
    'http://127.0.0.1:8404/admin',
    'https://127.0.0.1:8403/admin',
    'http://10.0.0.1:8403/admin',
    'http://localhost.example:8403/admin',
  ];
  for (const url of beside) t.false(denies(deny, at(url)), `not denied: ${JSON.stringify(url)}`);
  // default ports, trailing dots and case of the host, on a named host
  for (const url of [
    'https://API.example.com/pay',
    'https://api.example.com:443/pay',
    'https://api.example.com./pay',
    'https://a@api.example.com/PAY;x',
  ])
    t.true(denies('https://api.example.com/pay', at(url)), url);
  t.false(denies('https://api.example.com/pay', at('http://api.example.com:443/pay')), 'another scheme');
  t.true(denies('http://a.example:80', at('http://a.example/x')), 'the default port written out');
  t.true(denies('https://a.example/Admin', at('https://a.example/admin')), 'the rule’s own case too');
});

test('an allow rule covers only the canonical spelling under its prefix', (t) => {
  const allow = 'http://127.0.0.1:8403/weather';
  const covered = [
    'http://127.0.0.1:8403/weather',
    'http://127.0.0.1:8403/weather/',
    'http://127.0.0.1:8403/weather/today?city=x',
    'http://127.0.0.1:8403/%77eather/today',
    'http://127.0.0.1:8403/x/../weather',
    'http://127.0.0.1:8403/weather/today;v=1',
    'http://localhost:8403/weather',
    'http://[::1]:8403/weather',
    'http://127.0.0.1:8403\\weather',
  ];
  for (const url of covered) t.true(allows(allow, at(url)), `allowed: ${JSON.stringify(url)}`);
  const outside = [
    'http://127.0.0.1:8403/Weather',
    'http://127.0.0.1:8403/WEATHER/today',
    'http://127.0.0.1:8403//weather',
    'http://127.0.0.1:8403/weather;v=1',
    'http://127.0.0.1:8403/weatherstation',
    'http://127.0.0.1:8403/weather/..;/admin',
    'http://127.0.0.1:8403/weather/.%2e;/admin',
    'http://127.0.0.1:8403/weather/../admin',
    'http://127.0.0.1:8403/weather/%2e%2e/admin',
    'http://127.0.0.1:8403/admin',
    'http://127.0.0.1:8404/weather',
    'https://127.0.0.1:8403/weather',
  ];
  for (const url of outside) t.false(allows(allow, at(url)), `not allowed: ${JSON.stringify(url)}`);
  t.true(allows('https://a.example', at('https://a.example/anything?x=1')), 'an origin covers every path');
  t.false(allows('https://a.example', at('https://b.a.example/')), 'another host');
});

test('the findings of the report: each spelling reaching a denied /admin is refused', (t) => {
  const origin = 'http://127.0.0.1:8403';
  const denyAdmin = { deniedServices: [`${origin}/admin`] };
  const rows: Array<[string, string]> = [
    ['/%61dmin', 'policy_service_denied:deniedServices'],
    ['/ADMIN', 'policy_service_denied:deniedServices'],
    ['/admin;v=1', 'policy_service_denied:deniedServices'],
    ['//admin', 'policy_service_denied:deniedServices'],
    ['/x/..%2fadmin', 'policy_service_denied:encodedPath'],
    ['/admin%2fx', 'policy_service_denied:encodedPath'],
    ['/admin%2Fx', 'policy_service_denied:encodedPath'],
    ['/x%5cadmin', 'policy_service_denied:encodedPath'],
    ['/admin%3bv=1', 'policy_service_denied:encodedPath'],
    ['/%2561dmin', 'policy_service_denied:encodedPath'],
  ];
  for (const [path, code] of rows) t.is(refusal(denyAdmin, `${origin}${path}`), code, path);
  t.is(refusal(denyAdmin, `${origin}/weather`), undefined, 'another path is paid');
  // an allow-list of /weather is not passed by a path that leaves it
  const allowWeather = { allowedServices: [`${origin}/weather`] };
  t.is(refusal(allowWeather, `${origin}/weather/..%2fadmin`), 'policy_service_denied:encodedPath');
  t.is(refusal(allowWeather, `${origin}/weather/..;/admin`), 'policy_service_not_allowed:allowedServices');
  t.is(refusal(allowWeather, `${origin}/weather/today`), undefined);
  // a deny of 127.0.0.1 covers localhost
  t.is(
    refusal({ deniedServices: [origin] }, 'http://localhost:8403/x'),
    'policy_service_denied:deniedServices',
  );
  t.is(
    refusal({ deniedServices: ['http://localhost:8403'] }, `${origin}/x`),
    'policy_service_denied:deniedServices',
  );
});

test('encoded separators are refused only under a path rule of the same origin', (t) => {
  const url = 'https://a.example/files/a%2Fb';
  t.is(refusal({}, url), undefined, 'no rule');
  t.is(refusal({ deniedServices: ['https://b.example/x'] }, url), undefined, 'a path rule of another origin');
  t.is(
    refusal({ allowedServices: ['https://a.example'] }, url),
    undefined,
    'an origin rule has no path to escape',
  );
  t.is(refusal({ deniedServices: ['https://a.example/admin'] }, url), 'policy_service_denied:encodedPath');
  t.is(refusal({ allowedServices: ['https://a.example/files'] }, url), 'policy_service_denied:encodedPath');
});

test('denied wins over allowed; an empty allow-list allows any service; a bad URL is left to the quote', (t) => {
  const url = 'https://a.example/pay';
  t.is(refusal({}, url), undefined);
  t.is(
    refusal({ allowedServices: ['https://a.example'], deniedServices: ['https://a.example/pay'] }, url),
    'policy_service_denied:deniedServices',
  );
  t.is(
    refusal({ allowedServices: ['https://b.example'] }, url),
    'policy_service_not_allowed:allowedServices',
  );
  t.is(refusal({ allowedServices: ['https://a.example'] }, url), undefined);
  t.is(refusal({ deniedServices: ['https://a.example'] }, 'not a url'), undefined);
});
