// The cents Money Manager Ex shows for an amount it stores as a REAL number, computed
// independently of the mapping's SQL: MMEX's CurrencyModel::toString formats
// `value + 1e-10` with fmt's "{:.2f}" (the euro's SCALE 100), which rounds the binary
// number exactly, a tie to even (as C's printf and Python's '%.2f' do).

/** `fmt::format("{:.2f}", amount + 1e-10)` as whole cents, from the exact binary value. */
export function mmexShownCents(amount: number): number {
  const x = amount + 1e-10;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // |x| = mantissa × 2^exponent, exactly.
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = biased === 0 ? -1074 : biased - 1075;
  const hundred = mantissa * 100n;
  let cents: bigint;
  if (exponent >= 0) cents = hundred << BigInt(exponent);
  else {
    const unit = 1n << BigInt(-exponent);
    cents = hundred / unit;
    const twice = 2n * (hundred % unit);
    if (twice > unit || (twice === unit && cents % 2n === 1n)) cents += 1n;
  }
  return x < 0 && cents > 0n ? -Number(cents) : Number(cents);
}
