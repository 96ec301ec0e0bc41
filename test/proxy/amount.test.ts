import test from 'ava';
import { AmountError, formatAmount, parseAmount } from '../../src/api/amount.ts';

const MAX = 100_000n * 10_000_000n;

test('parses amounts with up to 7 decimals into stroops', (t) => {
  t.is(parseAmount('1.0000000', MAX), 10_000_000n);
  t.is(parseAmount('0.0000001', MAX), 1n);
  t.is(parseAmount('12.5', MAX), 125_000_000n);
  t.is(parseAmount('7', MAX), 70_000_000n);
  t.is(parseAmount('100000.0000000', MAX), MAX);
});

test('formats stroops as <int>.<7 digits>', (t) => {
  t.is(formatAmount(1n), '0.0000001');
  t.is(formatAmount(125_000_000n), '12.5000000');
  t.is(formatAmount(0n), '0.0000000');
  t.is(formatAmount(-15n), '-0.0000015');
  t.is(parseAmount(formatAmount(987654321n), MAX), 987654321n);
});

const refused: Array<[unknown, RegExp]> = [
  ['0', /greater than zero/],
  ['0.0000000', /greater than zero/],
  ['-1', /not a decimal/],
  ['+1', /not a decimal/],
  ['1e3', /not a decimal/],
  ['1.00000001', /not a decimal/],
  ['100000.0000001', /exceeds the maximum/],
  ['999999999999', /exceeds the maximum/],
  [' 1', /not a decimal/],
  ['1 ', /not a decimal/],
  ['1\n', /not a decimal/],
  ['', /not a decimal/],
  ['.5', /not a decimal/],
  ['1.', /not a decimal/],
  ['01', /not a decimal/],
  ['0x10', /not a decimal/],
  ['1,5', /not a decimal/],
  ['Infinity', /not a decimal/],
  ['NaN', /not a decimal/],
  ['١', /not a decimal/],
  [1, /must be a string/],
  [1.5, /must be a string/],
  [10n, /must be a string/],
  [null, /must be a string/],
  [undefined, /must be a string/],
  [['1'], /must be a string/],
  [{ amount: '1' }, /must be a string/],
];

for (const [value, message] of refused) {
  test(`refuses amount ${JSON.stringify(typeof value === 'bigint' ? `${value}n` : value) ?? 'undefined'}`, (t) => {
    const error = t.throws(() => parseAmount(value, MAX), { instanceOf: AmountError });
    t.regex(error!.message, message);
  });
}
