package main

// gengate server-key: the server key's rotation, and what no key opens
// (docs/server-key.md).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gengate/gengate/internal/keyfile"
	"github.com/gengate/gengate/internal/sqlstore"
)

// keyringFlags adds the server key settings serve has.
func keyringFlags(key, previous *string) func(*flags) {
	return func(f *flags) {
		f.str(key, "webhook-key", "", "the install's server key, when it is not <data>/webhook.key")
		f.str(previous, "webhook-previous-key", "", "the rotated-out server key, with --webhook-key")
	}
}

// openKeyring opens the store under the keyring the flags name; check
// false opens it even when the keyring does not open the database's key
// check.
func openKeyring(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer,
	check bool, extra func(*flags)) (*sqlstore.DB, *serverKeyring, error) {
	var key, previous string
	var ring *serverKeyring
	s, pos, _, err := openStoreWith(ctx, name, args, getenv, stderr, func(f *flags) {
		keyringFlags(&key, &previous)(f)
		if extra != nil {
			extra(f)
		}
	}, func(data string) ([]sqlstore.Option, error) {
		var err error
		if ring, err = loadKeyring(data, key, previous, false); err != nil {
			return nil, err
		}
		return ring.options(check)
	})
	if err != nil {
		return nil, nil, err
	}
	if len(pos) > 0 {
		s.Close()
		return nil, nil, fmt.Errorf("unexpected argument %q", pos[0])
	}
	return s, ring, nil
}

func (r *serverKeyring) options(check bool) ([]sqlstore.Option, error) {
	box, err := r.box()
	if err != nil {
		return nil, err
	}
	opts := []sqlstore.Option{sqlstore.WithFileTokenKey(box)}
	if !check {
		opts = append(opts, sqlstore.WithoutServerKeyCheck())
	}
	return opts, nil
}

// keyFileText is a key file holding the keys, the current one first.
func keyFileText(keys ...[]byte) []byte {
	var b strings.Builder
	for _, k := range keys {
		b.Write(k)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// serverKeyRotate starts a rotation (a keyring of one key) or finishes
// the one under way (a keyring with a previous key): every record is
// re-sealed under the current key.
func serverKeyRotate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, ring, err := openKeyring(ctx, "server-key rotate", args, getenv, stderr, true, nil)
	if err != nil {
		return err
	}
	defer func() { s.Close() }()
	if len(ring.keys) == 1 {
		fresh, err := newServerKey()
		if err != nil {
			return err
		}
		if ring.path == "" {
			fmt.Fprintf(stdout, "new server key (shown once; keep it in your secret store):\n%s\n\n", fresh)
			fmt.Fprintln(stdout, "next: give every process GENGATE_WEBHOOK_KEY=<the new key> and GENGATE_WEBHOOK_PREVIOUS_KEY=<the current key>,")
			fmt.Fprintln(stdout, "restart them one by one, then run gengate server-key rotate again with those two settings to re-seal every record")
			fmt.Fprintln(stdout, "(docs/server-key.md, Rotation)")
			return nil
		}
		// The new key goes first, the old one stays second: both open,
		// and processes reading the file learn the new key by themselves.
		if err := keyfile.Replace(ring.path, keyFileText(fresh, ring.keys[0])); err != nil {
			return fmt.Errorf("server key: %w", err)
		}
		fmt.Fprintf(stdout, "new server key: first line of %s; the previous key is its second line and still opens\n", ring.path)
		ring.keys = [][]byte{fresh, ring.keys[0]}
		// Reopen under the new keyring (the old one seals under the old key).
		s.Close()
		s, ring, err = openKeyring(ctx, "server-key rotate", args, getenv, stderr, true, nil)
		if err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "rotation under way: re-sealing under the current key (%d previous key(s) still open)\n", len(ring.keys)-1)
	}
	rep, err := s.ResealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("%w (nothing is lost: run gengate server-key rotate again to finish)", err)
	}
	printReseal(stdout, rep)
	if ring.path != "" {
		fmt.Fprintln(stdout, "next: once every process has the new key (those reading this key file have it within a second; copy the file to those with their own),")
	} else {
		fmt.Fprintln(stdout, "next: once every process runs with the new --webhook-key,")
	}
	fmt.Fprintln(stdout, "run gengate server-key drop-previous")
	return nil
}

func printReseal(w io.Writer, rep sqlstore.ResealReport) {
	fmt.Fprintf(w, "re-sealed %d record(s) under the current key; %d already were\n", rep.Resealed, rep.Current)
	if rep.Dropped > 0 {
		fmt.Fprintf(w, "%d rotated-out webhook secret(s) opened under no key and no longer sign\n", rep.Dropped)
	}
	if len(rep.Lost) > 0 {
		fmt.Fprintf(w, "%d record(s) open under no key: gengate server-key lost lists them, gengate server-key reissue re-issues them\n", len(rep.Lost))
	}
}

// serverKeyDropPrevious re-seals what is left under the previous key and
// drops it from the keyring.
func serverKeyDropPrevious(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, ring, err := openKeyring(ctx, "server-key drop-previous", args, getenv, stderr, true, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(ring.keys) == 1 {
		return errors.New("server key: no previous key to drop (the keyring holds one key)")
	}
	rep, err := s.ResealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("%w (nothing is lost: run it again)", err)
	}
	printReseal(stdout, rep)
	if ring.path == "" {
		fmt.Fprintln(stdout, "every record opens under --webhook-key: remove --webhook-previous-key (GENGATE_WEBHOOK_PREVIOUS_KEY) from every process")
		return nil
	}
	if err := keyfile.Replace(ring.path, keyFileText(ring.keys[0])); err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	fmt.Fprintf(stdout, "dropped the previous key from %s: the rotation is done\n", ring.path)
	return nil
}

// serverKeyLost lists the records no key of the keyring opens.
func serverKeyLost(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, _, err := openKeyring(ctx, "server-key lost", args, getenv, stderr, false, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if ok, err := s.CheckOpens(ctx); err != nil {
		return err
	} else if !ok {
		fmt.Fprintln(stdout, "these keys do not open the database's key check: they are not the key serve runs with (give that one), or it is gone for good (then every record below is lost)")
	}
	lost, err := s.LostSecrets(ctx)
	if err != nil {
		return err
	}
	if len(lost) == 0 {
		fmt.Fprintln(stdout, "no lost records: every sealed record opens under these keys")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tACCOUNT")
	for _, r := range lost {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Kind, r.ID, r.AccountID)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d lost record(s): gengate server-key reissue gives them new values (docs/server-key.md)\n", len(lost))
	return nil
}

// serverKeyReissue gives every lost record a new value under the current
// key.
func serverKeyReissue(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var gone bool
	s, _, err := openKeyring(ctx, "server-key reissue", args, getenv, stderr, false, func(f *flags) {
		f.BoolVar(&gone, "key-gone", false, "the install's key is gone for good: re-issue everything the keys given do not open, and make the current key the database's")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if ok, err := s.CheckOpens(ctx); err != nil {
		return err
	} else if !ok && !gone {
		return errors.New("server key: these keys do not open the database's key check, so every sealed record would be re-issued; " +
			"give the install's key (--webhook-key or <data>/webhook.key), or, if it is gone for good, run again with --key-gone")
	}
	done, err := s.ReissueLost(ctx, time.Now())
	for _, r := range done {
		fmt.Fprintf(stdout, "re-issued %s %s (account %s)\n", r.Kind, r.ID, r.AccountID)
	}
	if err != nil {
		return fmt.Errorf("%w (run it again to re-issue the rest)", err)
	}
	fmt.Fprintf(stdout, "%d record(s) re-issued: account holders see a new webhook secret at GET /api/v1/webhooks/secret or by rotating an endpoint's, and new file URLs on their tasks (the old URLs no longer work)\n", len(done))
	return nil
}
