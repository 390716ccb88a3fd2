package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxExponent bounds the decimal exponent of a number lint will hold
// exactly: 1e400000000 as a big.Rat is a number of a billion digits, which
// no schema needs and which would cost seconds and gigabytes to build. A
// number past it makes the judgement ErrLimit (the reference library builds
// it and stalls).
const maxExponent = 10000

// number returns v as an exact rational: a json.Number exactly as written,
// a float64 as its shortest decimal (what encoding/json would print).
// ok is false when v is not a number; err is ErrLimit when its exponent is
// out of bounds.
func number(v any) (r *big.Rat, ok bool, err error) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = string(t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, false, nil
		}
		s = strconv.FormatFloat(t, 'g', -1, 64)
	default:
		return nil, false, nil
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, true, ErrLimit
		}
	}
	r, ok = new(big.Rat).SetString(s)
	if !ok {
		return nil, false, nil
	}
	return r, true, nil
}

func isNumber(v any) bool {
	switch t := v.(type) {
	case json.Number:
		return true
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	}
	return false
}

// isInteger: a number whose value is whole (1.0 and 1e2 are integers, as
// in every draft since 6 and as the reference library reads draft 4 too).
func isInteger(v any) (bool, error) {
	r, ok, err := number(v)
	if err != nil || !ok {
		return false, err
	}
	return r.IsInt(), nil
}

// jsonType of a decoded JSON value; "" for a Go value JSON cannot hold.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if isNumber(v) {
		return "number"
	}
	return ""
}

// equal is JSON equality: numbers by value (1 equals 1.0), objects by
// members regardless of order. cost is charged one step per value compared.
func (b *budget) equal(x, y any) (bool, error) {
	if err := b.step(); err != nil {
		return false, err
	}
	switch a := x.(type) {
	case nil:
		return y == nil, nil
	case bool:
		c, ok := y.(bool)
		return ok && a == c, nil
	case string:
		c, ok := y.(string)
		return ok && a == c, nil
	case []any:
		c, ok := y.([]any)
		if !ok || len(a) != len(c) {
			return false, nil
		}
		for i := range a {
			if eq, err := b.equal(a[i], c[i]); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	case map[string]any:
		c, ok := y.(map[string]any)
		if !ok || len(a) != len(c) {
			return false, nil
		}
		for k, av := range a {
			cv, ok := c[k]
			if !ok {
				return false, nil
			}
			if eq, err := b.equal(av, cv); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	}
	if !isNumber(x) || !isNumber(y) {
		return false, nil
	}
	rx, _, err := number(x)
	if err != nil {
		return false, err
	}
	ry, _, err := number(y)
	if err != nil {
		return false, err
	}
	return rx.Cmp(ry) == 0, nil
}

// canonical appends a key equal for equal JSON values and different for
// different ones (numbers in lowest terms, object members sorted), so that
// uniqueItems is one pass over the array.
func (b *budget) canonical(dst []byte, v any) ([]byte, error) {
	if err := b.step(); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case nil:
		return append(dst, 'n'), nil
	case bool:
		if t {
			return append(dst, 't'), nil
		}
		return append(dst, 'f'), nil
	case string:
		dst = append(dst, 's')
		return strconv.AppendQuote(dst, t), nil
	case []any:
		dst = append(dst, '[')
		for _, x := range t {
			var err error
			if dst, err = b.canonical(dst, x); err != nil {
				return nil, err
			}
			dst = append(dst, ',')
		}
		return append(dst, ']'), nil
	case map[string]any:
		dst = append(dst, '{')
		for _, k := range sortedKeys(t) {
			dst = strconv.AppendQuote(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = b.canonical(dst, t[k]); err != nil {
				return nil, err
			}
			dst = append(dst, ',')
		}
		return append(dst, '}'), nil
	}
	r, ok, err := number(v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrUnsupported
	}
	dst = append(dst, 'd')
	return append(dst, r.RatString()...), nil
}
