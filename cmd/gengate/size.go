package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Sizes: every setting that takes bytes also takes a unit, in a flag, a
// GENGATE_* variable or the --config file alike: 1048576, 1MiB, 64MB,
// 1.5GiB. KB, MB, GB and TB are powers of 1000 and KiB, MiB, GiB and TiB
// powers of 1024, as in the IEC's and SI's own meanings (and Kubernetes'
// quantities); K, M, G and T alone are taken as the binary ones, as
// nginx's client_max_body_size reads them. Case does not matter.

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// parseSize reads a size in bytes: a number (possibly negative, for the
// settings where -1 means never) and an optional unit.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	}
	mult, ok := sizeUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with a unit: 512KiB, 1MiB, 64MB, 2GiB)", s)
	}
	if unit == "" {
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			return n, nil
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with a unit: 512KiB, 1MiB, 64MB, 2GiB)", s)
	}
	b := x * mult
	if b > math.MaxInt64 || b < math.MinInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(b), nil
}

// formatSize writes a size the way parseSize reads it, in the largest
// binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		v    int64
	}{{"TiB", 1 << 40}, {"TB", 1e12}, {"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}} {
		if n != 0 && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// sizeValue is a flag.Value of a size in bytes.
type sizeValue int64

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

func (v *sizeValue) String() string { return formatSize(int64(*v)) }

// mibValue is a flag.Value of a size counted in MiB: a bare number is
// MiB, a number with a unit is converted (and must come to whole MiB).
type mibValue int

func (v *mibValue) Set(s string) error {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		*v = mibValue(n)
		return nil
	}
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	if n%(1<<20) != 0 {
		return errors.New("must be whole MiB")
	}
	if n>>20 > math.MaxInt32 {
		return fmt.Errorf("%q is too large", s)
	}
	*v = mibValue(n >> 20)
	return nil
}

func (v *mibValue) String() string { return strconv.Itoa(int(*v)) }

// size adds a flag of a size in bytes, with its GENGATE_* fallback.
func (f *flags) size(p *int64, name string, def int64, usage string) error {
	*p = def
	v := (*sizeValue)(p)
	if e := f.getenv(envName(name)); e != "" {
		if err := v.Set(e); err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
	}
	f.Var(v, name, usage+" ("+envName(name)+")")
	return nil
}

// sizeMiB adds a flag counted in MiB that also takes units.
func (f *flags) sizeMiB(p *int, name string, def int, usage string) error {
	*p = def
	v := (*mibValue)(p)
	if e := f.getenv(envName(name)); e != "" {
		if err := v.Set(e); err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
	}
	f.Var(v, name, usage+" ("+envName(name)+")")
	return nil
}
