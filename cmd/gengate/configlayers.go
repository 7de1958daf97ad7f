package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Serve's settings come in four layers, each overriding the ones below:
// a flag, then its GENGATE_* environment variable, then the key of the
// same name under serve: in the --config file, then the default. The
// layers are laid over the flag set itself, whatever flags it holds, so
// a flag added to serve is a file key and a variable at once, and shows
// in --print-config, with nothing else to write.

// envNamesKey is the name under which getenv lists the GENGATE_
// variables that are set, one per line: main's getenv answers it from
// os.Environ, so that serve can refuse a variable that names no setting
// (a mistyped one was silently ignored); tests answer it from their map.
const envNamesKey = "GENGATE_*"

// otherEnv are the GENGATE_ variables that are not serve settings and
// that serve does not refuse: the API client's (generate, jobs), the
// storage of review settle, and the switches of the project's own tests
// and tools (a prefix ends in *).
var otherEnv = []string{"GENGATE_URL", "GENGATE_KEY", "GENGATE_STORAGE", "GENGATE_TEST_*", "GENGATE_MATTE_*", "GENGATE_EVAL*",
	"GENGATE_BENCH_*", "GENGATE_UPDATE_DOCS", "GENGATE_VERSITYGW", "GENGATE_OPENAPI_COVERAGE"}

// Setting sources, as --print-config names them.
const (
	fromFlag    = "flag"
	fromEnv     = "env"
	fromFile    = "file"
	fromDefault = "default"
)

// setting is one resolved serve setting: its flag name, value and layer.
type setting struct {
	Name, Value, Source string
}

// layerSettings lays the environment and the file's serve: keys under the
// flags already parsed into f, and returns every setting with its source.
// An unknown key under serve:, or a GENGATE_ variable that names no flag
// of f (and is not in otherEnv), is an error naming it.
func layerSettings(f *flags, file *yaml.Node, path string) ([]setting, error) {
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := checkEnvNames(f); err != nil {
		return nil, err
	}
	fileVals, err := fileSettings(f, file, path)
	if err != nil {
		return nil, err
	}
	var out []setting
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		src := fromDefault
		switch env := f.getenv(envName(fl.Name)); {
		case set[fl.Name]:
			src = fromFlag
		case env != "":
			src = fromEnv
			// The helpers read the variable as the flag's default already;
			// setting it again covers a flag added without them.
			if err := fl.Value.Set(env); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(fl.Name), err))
			}
		default:
			if v, ok := fileVals[fl.Name]; ok {
				src = fromFile
				if err := fl.Value.Set(v); err != nil {
					errs = append(errs, fmt.Errorf("%s: serve.%s: %w", path, fl.Name, err))
				}
			}
		}
		out = append(out, setting{Name: fl.Name, Value: fl.Value.String(), Source: src})
	})
	return out, errors.Join(errs...)
}

// fileSettings reads the serve: mapping of the --config file into flag
// values: a scalar as written, a list of scalars joined by commas.
func fileSettings(f *flags, file *yaml.Node, path string) (map[string]string, error) {
	vals := map[string]string{}
	if file == nil || file.Kind == 0 {
		return vals, nil
	}
	if file.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: serve: must be a mapping of setting names to values", path, file.Line)
	}
	for i := 0; i+1 < len(file.Content); i += 2 {
		k, v := file.Content[i], file.Content[i+1]
		name := k.Value
		if f.Lookup(name) == nil || name == "config" || name == "print-config" {
			return nil, fmt.Errorf("%s: line %d: serve: unknown setting %q%s", path, k.Line, name, suggest(name, f))
		}
		switch v.Kind {
		case yaml.ScalarNode:
			vals[name] = v.Value
		case yaml.SequenceNode:
			var parts []string
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("%s: line %d: serve.%s: a list of plain values only", path, e.Line, name)
				}
				parts = append(parts, e.Value)
			}
			vals[name] = strings.Join(parts, ",")
		default:
			return nil, fmt.Errorf("%s: line %d: serve.%s: a value or a list of values, not a mapping", path, v.Line, name)
		}
	}
	return vals, nil
}

// checkEnvNames refuses a GENGATE_ variable that names no flag of f.
func checkEnvNames(f *flags) error {
	known := map[string]bool{}
	f.VisitAll(func(fl *flag.Flag) { known[envName(fl.Name)] = true })
	var bad []string
	for _, name := range strings.Split(f.getenv(envNamesKey), "\n") {
		if name = strings.TrimSpace(name); name == "" || known[name] || otherEnvName(name) {
			continue
		}
		bad = append(bad, name)
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	name := bad[0]
	hint := ""
	if c := closest(strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "GENGATE_"), "_", "-")), f); c != "" {
		hint = " (did you mean " + envName(c) + "?)"
	}
	return fmt.Errorf("environment variable %s names no setting of gengate %s%s; unset it (%d such: %s)",
		name, f.Name(), hint, len(bad), strings.Join(bad, ", "))
}

func otherEnvName(name string) bool {
	for _, o := range otherEnv {
		if p, ok := strings.CutSuffix(o, "*"); ok && strings.HasPrefix(name, p) || o == name {
			return true
		}
	}
	return false
}

// suggest names the flag of f closest to a mistyped name, if one is close.
func suggest(name string, f *flags) string {
	if c := closest(name, f); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// closest is the flag of f within two edits of name, or "".
func closest(name string, f *flags) string {
	best, bestD := "", 3
	f.VisitAll(func(fl *flag.Flag) {
		if d := editDistance(name, fl.Name); d < bestD {
			best, bestD = fl.Name, d
		}
	})
	return best
}

// editDistance is the Damerau–Levenshtein distance (with adjacent
// transpositions, the commonest typo: max-bdoy).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// secretSetting reports whether a setting's value is a secret, by its
// name's last word: a key, token, secret or password.
func secretSetting(name string) bool {
	words := strings.Split(name, "-")
	switch words[len(words)-1] {
	case "key", "token", "secret", "password", "passphrase", "credentials":
		return true
	}
	return false
}

// maskValue hides a secret setting's value, and the password of a URL
// (a postgres:// --database, say).
func maskValue(name, v string) string {
	if v == "" {
		return v
	}
	if secretSetting(name) {
		return "********"
	}
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return strings.Replace(u.String(), "xxxxx", "********", 1)
		}
	}
	return v
}

// printSettings writes the resolved settings as a --config file's serve:
// mapping (it reads back as one), each with its source, secrets masked.
func printSettings(w io.Writer, settings []setting, configPath string) {
	fmt.Fprintln(w, "# gengate serve --print-config: each setting from a flag, else its GENGATE_* variable, else the --config file, else its default")
	if configPath != "" {
		fmt.Fprintf(w, "# --config %s\n", configPath)
	}
	fmt.Fprintln(w, "serve:")
	for _, s := range settings {
		if s.Name == "config" || s.Name == "print-config" {
			continue
		}
		src := s.Source
		if src == fromEnv {
			src += " " + envName(s.Name)
		}
		fmt.Fprintf(w, "  %s: %s  # %s\n", s.Name, yamlScalar(maskValue(s.Name, s.Value)), src)
	}
}

// plainScalar is a value YAML reads back as the same text unquoted.
var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./:@+,=-]*$|^-[0-9.]+$`)

// yamlScalar writes a value as a YAML scalar that reads back as the same
// string.
func yamlScalar(v string) string {
	if plainScalar.MatchString(v) {
		return v
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", v)
	}
	return strings.TrimSuffix(string(b), "\n")
}
