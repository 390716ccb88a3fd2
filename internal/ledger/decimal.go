package ledger

import (
	"errors"
	"math/big"
	"strings"
)

// Decimal is an exact decimal number: coef × 10^-scale. Rates and CAD
// amounts are money: they are never floats.
type Decimal struct {
	coef  *big.Int
	scale int
}

// maxDecimalText bounds the text ParseDecimal accepts: a rate is a few
// digits, and an amount never comes near this.
const maxDecimalText = 64

// ErrDecimal: the text is not a non-negative decimal of digits with at most
// one point.
var ErrDecimal = errors.New("ledger: not a decimal")

// ParseDecimal reads a non-negative decimal such as "1.3643" or "10000".
// Exponents, signs, spaces and a bare or trailing point are refused.
func ParseDecimal(s string) (Decimal, error) {
	if s == "" || len(s) > maxDecimalText {
		return Decimal{}, ErrDecimal
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" || (hasPoint && frac == "") || !digits(whole) || !digits(frac) {
		return Decimal{}, ErrDecimal
	}
	c, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return Decimal{}, ErrDecimal
	}
	return Decimal{coef: c, scale: len(frac)}, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Units is the decimal units × 10^-decimals (USDC units: 6 decimals).
func Units(units uint64, decimals int) Decimal {
	return Decimal{coef: new(big.Int).SetUint64(units), scale: decimals}
}

// Zero is 0.
func Zero() Decimal { return Decimal{coef: new(big.Int)} }

func (d Decimal) c() *big.Int {
	if d.coef == nil {
		return new(big.Int)
	}
	return d.coef
}

// Mul returns d × e, exactly.
func (d Decimal) Mul(e Decimal) Decimal {
	return Decimal{coef: new(big.Int).Mul(d.c(), e.c()), scale: d.scale + e.scale}
}

// Add returns d + e, exactly.
func (d Decimal) Add(e Decimal) Decimal {
	a, b, scale := align(d, e)
	return Decimal{coef: a.Add(a, b), scale: scale}
}

// Sign reports -1, 0 or +1.
func (d Decimal) Sign() int { return d.c().Sign() }

// Cmp compares d and e: -1, 0 or +1.
func (d Decimal) Cmp(e Decimal) int {
	a, b, _ := align(d, e)
	return a.Cmp(b)
}

func align(d, e Decimal) (*big.Int, *big.Int, int) {
	a, b := new(big.Int).Set(d.c()), new(big.Int).Set(e.c())
	ten := big.NewInt(10)
	for s := d.scale; s < e.scale; s++ {
		a.Mul(a, ten)
	}
	for s := e.scale; s < d.scale; s++ {
		b.Mul(b, ten)
	}
	return a, b, max(d.scale, e.scale)
}

// String writes the decimal without trailing fractional zeros: "0.013643",
// "1.5", "0". The value is exact; only redundant zeros go.
func (d Decimal) String() string {
	digits := d.c().String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	scale := d.scale
	for scale > 0 && strings.HasSuffix(digits, "0") && len(digits) > 1 {
		digits, scale = digits[:len(digits)-1], scale-1
	}
	if digits == "0" {
		return "0"
	}
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}
