package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// This file holds the account commands: accounts create|link|list|show,
// and keys list.

// linkBase is the base of the links the CLI prints: --public-url, or the
// server's listening address.
func linkBase(publicURL, addr string) string {
	if publicURL != "" {
		return publicURL
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://localhost:8080"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func cliService(s *sqlstore.DB) *gengate.Service {
	return &gengate.Service{Store: s, Events: gengate.NewEvents()}
}

func accountsCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var email, name, publicURL string
	var credits int
	var operator bool
	s, _, _, err := openStore(ctx, "accounts create", args, getenv, stderr, func(f *flags) {
		f.StringVar(&email, "email", "", "email of the account's first member (required)")
		f.IntVar(&credits, "credits", -1, "credits of the new account (required)")
		f.StringVar(&name, "name", "", "name of the account (default: the email)")
		f.BoolVar(&operator, "operator", false, "the member is an operator (may use /api/v1/admin and the operator console)")
		f.str(&publicURL, "public-url", "http://localhost:8080", "base URL of the printed set-up link")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if email == "" || credits < 0 {
		return errors.New("usage: gengate accounts create --email E --credits N [--name NAME] [--operator]")
	}
	acct, m, token, err := cliService(s).CreateAccountWithLink(ctx, email, name, credits, operator)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account %s (%d credits), member %s (%s)\n", acct.ID, credits, m.Email, m.Role)
	fmt.Fprintf(stdout, "set-up link (valid %s, single use):\n%s\n", gengate.LinkTTL, gengate.LinkURL(publicURL, token))
	return nil
}

func accountsLink(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var email, publicURL string
	s, _, _, err := openStore(ctx, "accounts link", args, getenv, stderr, func(f *flags) {
		f.StringVar(&email, "email", "", "email of the member (required)")
		f.str(&publicURL, "public-url", "http://localhost:8080", "base URL of the printed sign-in link")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := gengate.NormalizeEmail(email)
	if err != nil {
		return errors.New("usage: gengate accounts link --email E")
	}
	m, err := s.FindMemberByEmail(ctx, e)
	if err != nil {
		return fmt.Errorf("no member with email %s", e)
	}
	token, err := cliService(s).IssueLink(ctx, m.ID, gengate.LinkSignIn)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sign-in link for %s (valid %s, single use):\n%s\n", m.Email, gengate.LinkTTL, gengate.LinkURL(publicURL, token))
	return nil
}

func accountsList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var q string
	var limit int
	s, _, _, err := openStore(ctx, "accounts list", args, getenv, stderr, func(f *flags) {
		f.StringVar(&q, "q", "", "only accounts whose id, name or member email contains this")
		f.IntVar(&limit, "limit", 1000, "most accounts shown")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	accts, err := s.ListAccounts(ctx, q, gengate.AccountCursor{}, limit)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tNAME\tBALANCE\tMEMBERS\tCREATED")
	for _, a := range accts {
		members, err := s.ListMembers(ctx, a.ID)
		if err != nil {
			return err
		}
		var emails []string
		for _, m := range members {
			emails = append(emails, m.Email+roleMark(m.Role))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", a.ID, a.Name, a.Balance, strings.Join(emails, ","), a.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func roleMark(role string) string {
	if role == gengate.RoleOperator {
		return " (operator)"
	}
	return ""
}

func accountsShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, pos, _, err := openStore(ctx, "accounts show", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(pos) != 1 {
		return errors.New("usage: gengate accounts show ACCOUNT-ID-OR-EMAIL")
	}
	id, err := accountID(ctx, s, pos[0])
	if err != nil {
		return err
	}
	a, err := s.FindAccount(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account  %s\nname     %s\nbalance  %d\ncreated  %s\n\nmembers:\n", a.ID, a.Name, a.Balance, a.CreatedAt.Format(time.RFC3339))
	members, err := s.ListMembers(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, m := range members {
		fmt.Fprintf(stdout, "  %s  %s  %s\n", m.Email, m.Role, m.ID)
	}
	fmt.Fprintln(stdout, "\nkeys:")
	return printKeys(ctx, s, stdout, a.ID, false)
}

func printKeys(ctx context.Context, s *sqlstore.DB, w io.Writer, accountID string, withAccount bool) error {
	var keys []gengate.APIKey
	if accountID != "" {
		ks, err := allKeys(ctx, s, accountID)
		if err != nil {
			return err
		}
		keys = ks
	} else {
		accts, err := s.ListAccounts(ctx, "", gengate.AccountCursor{}, 1<<30)
		if err != nil {
			return err
		}
		for _, a := range accts {
			ks, err := allKeys(ctx, s, a.ID)
			if err != nil {
				return err
			}
			keys = append(keys, ks...)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tPREFIX\tNAME\tCREATED\tLAST USED\tSPEND LIMIT\tSTATE"
	if withAccount {
		head = "ACCOUNT\t" + head
	}
	fmt.Fprintln(tw, head)
	now := time.Now()
	for _, k := range keys {
		used, limit, state := "-", "-", "active"
		if !k.LastUsedAt.IsZero() {
			used = k.LastUsedAt.Format(time.RFC3339)
		}
		if k.SpendLimit > 0 {
			limit = fmt.Sprintf("%d/day (%d today)", k.SpendLimit, k.SpentOn(now))
		}
		if !k.RevokedAt.IsZero() {
			state = "revoked " + k.RevokedAt.Format(time.RFC3339)
		}
		if k.Operator {
			state += ", operator"
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", k.ID, k.Prefix, k.Name, k.CreatedAt.Format(time.RFC3339), used, limit, state)
		if withAccount {
			row = k.AccountID + "\t" + row
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// allKeys reads every key of the account, a page at a time.
func allKeys(ctx context.Context, s *sqlstore.DB, accountID string) ([]gengate.APIKey, error) {
	var out []gengate.APIKey
	var after gengate.TaskCursor
	for {
		page, err := s.ListAPIKeys(ctx, accountID, after, 1000)
		if err != nil || len(page) < 1000 {
			return append(out, page...), err
		}
		out = append(out, page...)
		last := page[len(page)-1]
		after = gengate.TaskCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

// accountID is the account an --account value names: its id, or the
// email of one of its members.
func accountID(ctx context.Context, s *sqlstore.DB, idOrEmail string) (string, error) {
	if !strings.Contains(idOrEmail, "@") {
		return idOrEmail, nil
	}
	e, err := gengate.NormalizeEmail(idOrEmail)
	if err != nil {
		return "", err
	}
	m, err := s.FindMemberByEmail(ctx, e)
	if err != nil {
		return "", fmt.Errorf("no member with email %s", e)
	}
	return m.AccountID, nil
}

func keysList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var account string
	s, _, _, err := openStore(ctx, "keys list", args, getenv, stderr, func(f *flags) {
		f.StringVar(&account, "account", "", "only this account's keys: its id or a member's email (default: every account's)")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if account != "" {
		if account, err = accountID(ctx, s, account); err != nil {
			return err
		}
	}
	return printKeys(ctx, s, stdout, account, true)
}

// firstMember gives the first-start account its operator member, and
// returns the function that prints its set-up link beside the key once
// the server knows the address it listens on.
func firstMember(ctx context.Context, store *sqlstore.DB, acct *gengate.Account, email string, stdout io.Writer) (func(base string), error) {
	e, err := gengate.NormalizeEmail(email)
	if err != nil {
		return nil, fmt.Errorf("--first-email: %w", err)
	}
	m := gengate.NewMember(acct.ID, e, gengate.RoleOperator, time.Now())
	if err := store.CreateMember(ctx, m); err != nil {
		return nil, err
	}
	token, err := cliService(store).IssueLink(ctx, m.ID, gengate.LinkSetup)
	if err != nil {
		return nil, err
	}
	return func(base string) {
		fmt.Fprintf(stdout, "Its member %s (operator) sets a password with this link (valid %s, single use):\n%s\n",
			m.Email, gengate.LinkTTL, gengate.LinkURL(base, token))
	}, nil
}
