package fiojob

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// fio reads these as arithmetic or as host facts it fills in; neither has a
// meaning that survives being run by another program on another host.
var (
	errArithmetic = errors.New("arithmetic expressions are not supported; write the value out")
	errPercent    = errors.New("a percentage of the file is not supported; give a size")
	errZone       = errors.New("zone counts (the z suffix) are not supported")
)

// unsigned trims a number fio would read and refuses what no number of
// ours can be: nothing, an arithmetic expression, a negative what.
func unsigned(s, what string) (string, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return "", errors.New("empty value")
	case t[0] == '(':
		return "", errArithmetic
	case t[0] == '-':
		return "", errors.New("negative " + what)
	}
	return t, nil
}

// parseSize reads a byte count the way fio does with kb_base kb (1024 or
// 1000): k, m, g, t, p with an optional b are powers of kb, and kib, mib...
// are powers of the other base. So with fio's default kb_base=1024, 4k and
// 4KB are 4096 but 4KiB is 4000, which fio keeps for old job files' sake.
// Units are case-insensitive, a bare number is bytes, 0x starts hex.
//
// fio itself takes 1.5g as 1 and 4x as 4; those are errors here, since a
// job that silently does something else is worse than one that stops.
func parseSize(s string, kb int64) (int64, error) {
	t, err := unsigned(s, "value")
	if err != nil {
		return 0, err
	}
	base, digits := 10, t
	if len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X") {
		base, digits = 16, t[2:]
	}
	i := 0
	for i < len(digits) && isDigit(digits[i], base) {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	unit := strings.ToLower(strings.TrimSpace(digits[i:]))
	if strings.HasPrefix(unit, ".") {
		return 0, errors.New("fractions are not supported (fio would read 1.5g as 1 byte); use a smaller unit: 1536m")
	}
	n, err := strconv.ParseInt(digits[:i], base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	other := int64(1000)
	if kb == 1000 {
		other = 1024
	}
	var mult int64
	switch unit {
	case "", "b":
		mult = 1
	case "k", "kb":
		mult = kb
	case "m", "mb":
		mult = kb * kb
	case "g", "gb":
		mult = kb * kb * kb
	case "t", "tb":
		mult = kb * kb * kb * kb
	case "p", "pb":
		mult = kb * kb * kb * kb * kb
	case "kib":
		mult = other
	case "mib":
		mult = other * other
	case "gib":
		mult = other * other * other
	case "tib":
		mult = other * other * other * other
	case "pib":
		mult = other * other * other * other * other
	case "%":
		return 0, errPercent
	case "z":
		return 0, errZone
	default:
		return 0, fmt.Errorf("unknown unit %q (want k, m, g, t, p, optionally with b or ib)", digits[i:])
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n * mult, nil
}

func isDigit(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	return base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
}

// parseCount reads an integer option. fio parses its integer options with
// the size parser, so iodepth=1k is 1024; that is kept.
func parseCount(s string, kb int64) (int64, error) {
	return parseSize(s, kb)
}

// parseTime reads a fio time value: an integer with an optional unit us,
// usec, ms, msec, s, m (minutes), h or d; without one, the value counts in
// unit (seconds for runtime, ramp_time, startdelay). fio reads any other
// suffix as microseconds (2min is 2us there); that is an error here.
func parseTime(s string, unit time.Duration) (time.Duration, error) {
	t, err := unsigned(s, "time")
	if err != nil {
		return 0, err
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a time", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	suffix := strings.ToLower(strings.TrimSpace(t[i:]))
	if strings.HasPrefix(suffix, ".") {
		return 0, errors.New("fractions are not supported (fio would drop them); use a smaller unit: 1500ms")
	}
	mult := unit
	switch suffix {
	case "":
	case "us", "usec":
		mult = time.Microsecond
	case "ms", "msec":
		mult = time.Millisecond
	case "s":
		mult = time.Second
	case "m":
		mult = time.Minute
	case "h":
		mult = time.Hour
	case "d":
		mult = 24 * time.Hour
	default:
		return 0, fmt.Errorf("unknown time unit %q (want us, ms, s, m, h or d)", t[i:])
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return time.Duration(n) * mult, nil
}

// parseBool reads a boolean option: bare (set) or an integer, non-zero
// meaning on, as fio's options take them.
func parseBool(s string, bare bool) (bool, error) {
	if bare {
		return true, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return false, fmt.Errorf("%q is not a boolean (want 1 or 0)", s)
	}
	return n != 0, nil
}

// splitDirs splits a value given per data direction (read, write, trim):
// fio separates them with commas, or, when there is none, with ':' or '-'.
func splitDirs(v string) []string {
	var parts []string
	for {
		i := strings.IndexByte(v, ',')
		if i < 0 {
			i = strings.IndexAny(v, ":-")
		}
		if i < 0 {
			return append(parts, v)
		}
		parts = append(parts, v[:i])
		v = v[i+1:]
	}
}

// setDirs stores a per-direction value as fio does: the i-th part sets
// direction i, an empty part leaves it alone, and the last part also sets
// every direction after it, so bs=4k sets all three and rate=,1m only
// writes and trims.
func setDirs(dst *[3]int64, v string, parse func(string) (int64, error)) error {
	parts := splitDirs(v)
	if len(parts) > 3 {
		return errors.New("more than three values (read, write, trim)")
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			continue
		}
		n, err := parse(p)
		if err != nil {
			return err
		}
		dst[i] = n
		if i == len(parts)-1 {
			for k := i + 1; k < 3; k++ {
				dst[k] = n
			}
		}
	}
	return nil
}

// single rejects a value fio would read as a list or range of which it
// keeps only part, or which cephbench cannot run (random start delays,
// random file sizes).
func single(v string) error {
	t := strings.TrimSpace(v)
	if strings.ContainsAny(t, ",:") || len(t) > 1 && strings.Contains(t[1:], "-") {
		return errors.New("a list or range of values is not supported; give one value")
	}
	return nil
}

// num2str formats n as fio's num2str does with maxlen significant
// characters: divided by 1024 (pow2) or 1000 until it fits, with the
// remainder as decimals when there is room, and the unit prefix (Ki, Mi...
// or k, M...) before unit. fio prints block sizes with it: 4096B, 1024KiB,
// 16.0KiB.
func num2str(n uint64, maxlen int, pow2 bool, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	thousand := uint64(1000)
	if pow2 {
		prefixes = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
		thousand = 1024
	}
	post := 0
	modulo := uint64(math.MaxUint64)
	carry := false
	for post < len(prefixes) && len(strconv.FormatUint(n, 10)) > maxlen {
		modulo = n % thousand
		n /= thousand
		carry = modulo >= thousand/2
		post++
	}
	if post >= len(prefixes) {
		post = 0
	}
	if modulo == math.MaxUint64 {
		return strconv.FormatUint(n, 10) + prefixes[post] + unit
	}
	room := maxlen - len(strconv.FormatUint(n, 10))
	if room <= 1 {
		if carry {
			n++
		}
		return strconv.FormatUint(n, 10) + prefixes[post] + unit
	}
	frac := strconv.FormatFloat(float64(modulo)/float64(thousand), 'f', room-1, 64)
	if frac[0] == '1' {
		n++
	}
	return strconv.FormatUint(n, 10) + "." + frac[2:] + prefixes[post] + unit
}
