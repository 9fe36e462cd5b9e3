package storagecli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary size units, as PostgreSQL reads memory settings.
const (
	kB int64 = 1 << 10
	mB int64 = 1 << 20
	gB int64 = 1 << 30
	tB int64 = 1 << 40
)

// sizeUnits maps a unit (lower case) to bytes. PostgreSQL spells them B, kB,
// MB, GB, TB and gives them binary meaning; the IEC spellings are accepted
// too.
var sizeUnits = map[string]int64{
	"":    1,
	"b":   1,
	"kb":  kB,
	"kib": kB,
	"k":   kB,
	"mb":  mB,
	"mib": mB,
	"m":   mB,
	"gb":  gB,
	"gib": gB,
	"g":   gB,
	"tb":  tB,
	"tib": tB,
	"t":   tB,
}

// maxSize bounds parsed sizes (1 PB): larger is certainly a typo, and it
// keeps every computation far from int64 overflow.
const maxSize = 1 << 50

// ParseSize reads a size such as "16GiB", "512MB", "8kB", "1.5GB" or
// "1048576" (bytes). Units are binary as in PostgreSQL (1kB = 1024 bytes)
// and case-insensitive; a fraction is allowed if the result is a whole
// number of bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size %q: empty", s)
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q: no number", s)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, kB, MB, GB or TB)", s, t[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > maxSize/mult {
			return 0, fmt.Errorf("size %q: out of range", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: not a number", s)
	}
	b := f * float64(mult)
	if b > maxSize {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q: not a whole number of bytes", s)
	}
	return int64(b), nil
}

// FormatSetting writes bytes the way a PostgreSQL memory setting is written:
// the largest unit that divides it exactly ("4GB", "640MB", "8kB", "100B").
func FormatSetting(b int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"TB", tB}, {"GB", gB}, {"MB", mB}, {"kB", kB}} {
		if b != 0 && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

// HumanSize writes bytes for reading: "12.3 MB", "512 kB" (binary units).
func HumanSize(b int64) string {
	neg := b < 0
	if neg {
		b = -b
	}
	var out string
	switch {
	case b >= tB:
		out = trimFloat(float64(b)/float64(tB)) + " TB"
	case b >= gB:
		out = trimFloat(float64(b)/float64(gB)) + " GB"
	case b >= mB:
		out = trimFloat(float64(b)/float64(mB)) + " MB"
	case b >= kB:
		out = trimFloat(float64(b)/float64(kB)) + " kB"
	default:
		out = strconv.FormatInt(b, 10) + " B"
	}
	if neg {
		return "-" + out
	}
	return out
}

func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// timeUnits maps a PostgreSQL time unit to microseconds.
var timeUnits = map[string]float64{
	"us":  1,
	"ms":  1e3,
	"s":   1e6,
	"min": 60e6,
	"h":   3600e6,
	"d":   86400e6,
}

// splitQuantity splits "16MB" or "0.9" into the number and the unit.
func splitQuantity(s string) (float64, string, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '-' || t[i] == '+' || t[i] == 'e' && i > 0) {
		i++
	}
	f, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q is not a number", s)
	}
	return f, strings.TrimSpace(t[i:]), nil
}
