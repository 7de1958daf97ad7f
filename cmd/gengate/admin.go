package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/sqlstore"
	"go.yaml.in/yaml/v3"
)

// openStore parses the storage flags plus extra ones and opens the store.
// It opens only a database a server (or --init) made: a mistyped --data
// or a forgotten --database is an error naming what was looked at, and
// nothing is created.
func openStore(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer,
	extra func(*flags)) (*sqlstore.DB, []string, string, error) {
	return openStoreWith(ctx, name, args, getenv, stderr, extra, nil)
}

// openStoreWith is openStore with store options made once the flags are
// parsed (the server-key commands' keyring).
func openStoreWith(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer,
	extra func(*flags), more func(data string) ([]sqlstore.Option, error)) (*sqlstore.DB, []string, string, error) {
	var data, database, configFile string
	var initDB bool
	f := newFlags(name, getenv, stderr)
	f.storage(&data, &database)
	f.str(&configFile, "config", "", "serve's YAML --config file: its serve: settings (data, database, webhook-key, ...) apply here too, below flags and GENGATE_* variables")
	f.BoolVar(&initDB, "init", false, "create the database if there is none (a new install; serve makes it otherwise)")
	if extra != nil {
		extra(f)
	}
	pos, err := parseInterleaved(f, args)
	if err != nil {
		return nil, nil, "", err
	}
	if err := applyConfigFile(f, configFile); err != nil {
		return nil, nil, "", err
	}
	var opts []sqlstore.Option
	if !initDB {
		opts = append(opts, sqlstore.WithExisting())
	}
	if more != nil {
		o, err := more(data)
		if err != nil {
			return nil, nil, "", err
		}
		opts = append(opts, o...)
	}
	s, err := sqlstore.Open(ctx, database, data, opts...)
	var none *sqlstore.NoDatabaseError
	if errors.As(err, &none) {
		return nil, nil, "", fmt.Errorf("%w (%s); give the --data or --database of the server (or GENGATE_DATA, GENGATE_DATABASE, or --config with serve's file), or --init to create a new database there",
			err, lookedAt(f, database, configFile))
	}
	if err != nil {
		return nil, nil, "", err
	}
	return s, pos, data, nil
}

// applyConfigFile sets the flags of an operator command from the serve:
// settings of serve's --config file, as serve reads them: a flag given,
// or its GENGATE_* variable, wins over the file. Settings of serve's the
// command does not have are left to serve (which refuses unknown ones).
func applyConfigFile(f *flags, path string) error {
	if path == "" {
		return nil
	}
	fc, err := loadFileConfig(path)
	if err != nil {
		return err
	}
	node := &fc.Serve
	if node.Kind == 0 {
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: line %d: serve: must be a mapping of setting names to values", path, node.Line)
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		fl := f.Lookup(k.Value)
		if fl == nil || k.Value == "config" || set[k.Value] || f.getenv(envName(k.Value)) != "" || v.Kind != yaml.ScalarNode {
			continue
		}
		if err := fl.Value.Set(v.Value); err != nil {
			return fmt.Errorf("%s: serve.%s: %w", path, k.Value, err)
		}
	}
	return nil
}

// lookedAt says which setting named the database, and from where.
func lookedAt(f *flags, database, configFile string) string {
	name := "data"
	if database != "" {
		name = "database"
	}
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	switch {
	case set:
		return "from --" + name
	case f.getenv(envName(name)) != "":
		return "from " + envName(name)
	case configFile != "":
		return "--" + name + " " + f.Lookup(name).Value.String() + " (from " + configFile + " or the default)"
	}
	return "the default --data " + f.Lookup("data").DefValue
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("review settle JOB --refund") and returns the positional ones.
func parseInterleaved(f *flags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			return nil, err
		}
		if f.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, f.Arg(0))
		args = f.Args()[1:]
	}
}

func keysCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var credits int
	var name, account string
	var test, operator bool
	s, _, _, err := openStore(ctx, "keys create", args, getenv, stderr, func(f *flags) {
		f.IntVar(&credits, "credits", -1, "credits of the new account")
		f.StringVar(&name, "name", "", "name of the account and key")
		f.BoolVar(&test, "test", false, "make a test key (gg_test_): its generations run on the sandbox and charge nothing")
		f.StringVar(&account, "account", "", "add the key to this existing account (its id or a member's email) instead of creating one")
		f.BoolVar(&operator, "operator", false, "an operator key: it may use /api/v1/admin (grant credits, create accounts, sign-in links); keys made through the API never are")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if account != "" {
		if credits >= 0 {
			return errors.New("--credits creates an account; with --account the key joins an existing one")
		}
		if account, err = accountID(ctx, s, account); err != nil {
			return err
		}
		if _, err := s.FindAccount(ctx, account); err != nil {
			return err
		}
		newKey := gengate.NewAPIKey
		if test {
			newKey = gengate.NewTestAPIKey
		}
		secret, k := newKey(account, name, time.Now())
		k.Operator = operator
		if err := s.CreateAPIKey(ctx, k); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "key %s of account %s%s\n%s\n", k.ID, account, operatorMark(operator), secret)
		return nil
	}
	if credits < 0 {
		return errors.New("--credits N is required (N ≥ 0), or --account ID")
	}
	secret, acct, err := createKey(ctx, s, name, credits, test, operator)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account %s (%d credits)%s\n%s\n", acct.ID, credits, operatorMark(operator), secret)
	return nil
}

func operatorMark(operator bool) string {
	if operator {
		return ", operator key"
	}
	return ""
}

func keysRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, pos, _, err := openStore(ctx, "keys revoke", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(pos) != 1 {
		return errors.New("usage: gengate keys revoke KEY|PREFIX|ID")
	}
	which, shown := pos[0], pos[0]
	if (strings.HasPrefix(which, gengate.KeyPrefix) || strings.HasPrefix(which, gengate.TestKeyPrefix)) && len(which) > len(gengate.KeyPrefix)+6 {
		shown = gengate.DisplayPrefix(which) + "…"
		// The full key: found by its hash; only its prefix is printed.
		k, err := s.FindAPIKeyByHash(ctx, gengate.HashKey(which))
		if err != nil {
			return fmt.Errorf("no active key %s…", gengate.DisplayPrefix(which))
		}
		which = k.ID
	}
	if err := s.RevokeAPIKey(ctx, which, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s\n", shown)
	return nil
}

func creditsGrant(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var account, note string
	var credits int
	s, _, _, err := openStore(ctx, "credits grant", args, getenv, stderr, func(f *flags) {
		f.StringVar(&account, "account", "", "the account: its id or a member's email")
		f.IntVar(&credits, "credits", 0, "credits to add (negative to take away)")
		f.StringVar(&note, "note", "operator grant", "ledger note")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if account == "" || credits == 0 {
		return errors.New("usage: gengate credits grant --account ID-OR-EMAIL --credits N")
	}
	if account, err = accountID(ctx, s, account); err != nil {
		return err
	}
	balance, err := s.Grant(ctx, account, credits, note, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account %s balance %d\n", account, balance)
	return nil
}

func reviewList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, _, _, err := openStore(ctx, "review list", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	tasks, err := s.ListTasks(ctx, gengate.StatusNeedsReview, 1000)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%-36s  %-28s  %-26s  %6s  %-20s  %-36s  %s\n", "JOB", "REASON", "MODEL", "COST", "CREATED", "ACCOUNT", "PROMPT")
	names := map[string]string{}
	for _, t := range tasks {
		if _, ok := names[t.AccountID]; !ok {
			if a, err := s.FindAccount(ctx, t.AccountID); err == nil {
				names[t.AccountID] = a.Name
			}
		}
		fmt.Fprintf(stdout, "%-36s  %-28s  %-26s  %6d  %-20s  %-36s  %s\n", t.ID, t.ReviewReason, t.ModelID, t.Cost,
			t.CreatedAt.Format(time.RFC3339), t.AccountID+" ("+names[t.AccountID]+")", oneLine(t.Prompt, 80))
	}
	return nil
}

// oneLine shortens a prompt to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func reviewSettle(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var refund, deliver bool
	s, pos, data, err := openStore(ctx, "review settle", args, getenv, stderr, func(f *flags) {
		f.BoolVar(&refund, "refund", false, "fail the task and return its credits")
		f.BoolVar(&deliver, "deliver", false, "let the task run (or resume) with its charge kept")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if len(pos) != 1 || refund == deliver {
		return errors.New("usage: gengate review settle JOB-ID --refund|--deliver")
	}
	// The output storage of serve's --storage, given here by its variable.
	blobs, err := blob.Open(getenv("GENGATE_STORAGE"), filepath.Join(data, "files"), getenv)
	if err != nil {
		return err
	}
	svc := &gengate.Service{Store: s, Blobs: blobs, Events: gengate.NewEvents()}
	t, err := svc.Settle(ctx, pos[0], refund)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "task %s is now %s\n", t.ID, t.Status)
	return nil
}
