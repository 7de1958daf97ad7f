package sqlstore

// Claims on SQLite that read their tasks after the commit.
//
// A claim is a write, so on SQLite it runs on the one writer, which every
// other write waits for (groupcommit.go). Returning the claimed rows from
// the claim's UPDATE made the writer copy every column of every task it
// claimed (prompt, options, inputs, route) and decode their JSON, for
// nothing the claim itself needs. So the writer's statement returns only
// each claimed row's rowid, id and status (ClaimSteps' checkpoint needs
// the queued ones), and the tasks are read after the commit from the read
// pool, by rowid, and decoded there, beside the writer. The read sees the
// claim: it begins after the claim's commit (WAL readers see every commit
// made before they began), and nothing else writes a task this claim holds
// the lease of (writes are fenced by the lease token; the read checks that
// each row carries it).
//
// On PostgreSQL, which has no single writer, the claim's function returns
// the rows, but their JSON is decoded after the commit too, under the
// second rule below. Two rules for what can go wrong after the commit,
// when the tasks are leased to this claim but not yet in its hands:
//
//   - The read fails (SQLite: the database cannot be read): the claim is handed
//     back in one write (leases cleared, the attempt not counted, the
//     checkpointed tasks queued again, as if never claimed), and the claim
//     returns the read's error. If that write fails too, the leases run
//     out as after a crash (--task-lease): the tasks are claimed again,
//     and those checkpointed go to review, never submitted twice.
//   - A row cannot be decoded (its options, inputs, input URLs or route
//     are not the JSON they should be: a damaged or hand-edited row): that
//     task goes to needs_review (gengate.ReviewUnreadable), its credits
//     held for an operator, and the claim returns the others. Before, the
//     claim's write failed as a whole, so one such row stopped every claim
//     that reached it, and with it the process's workers.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// claimedRow is what the writer learns of a task it claimed.
type claimedRow struct {
	rowid  int64
	id     string
	queued bool // queued before the claim (checkpointed by ClaimSteps)
	// prevLease is the lease token the row held before the claim, one
	// that had run out (ClaimSteps: gengate.Task.TakenOver).
	prevLease string
}

// claimThenRead is claimTasks on SQLite: the lease (and checkpoint) in the
// writer, the tasks read and decoded after the commit.
func (s *DB) claimThenRead(ctx context.Context, token string, now time.Time, lease time.Duration, limit int, checkpoint bool) ([]*gengate.Task, error) {
	query, args := s.claimDue(token, ms(now.Add(lease)), ms(now), limit)
	var claimed []claimedRow
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		claimed = claimed[:0]
		var prev map[int64]string
		if checkpoint {
			// The leases the claim takes over, read before it rewrites
			// them (RETURNING has only the new values): the same selection
			// in the same transaction of the one writer.
			var err error
			if prev, err = s.expiredLeases(ctx, tx, now, limit); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var queued []string
		for rows.Next() {
			var c claimedRow
			var status string
			if err := rows.Scan(&c.rowid, &c.id, &status); err != nil {
				return err
			}
			c.queued, c.prevLease = status == string(gengate.StatusQueued), prev[c.rowid]
			if c.queued {
				queued = append(queued, c.id)
			}
			claimed = append(claimed, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if !checkpoint {
			return nil
		}
		if err := s.checkpointSubmits(ctx, tx, token, queued); err != nil {
			return err
		}
		if len(queued) == 0 {
			return nil
		}
		ids, err := json.Marshal(queued)
		if err != nil {
			return err
		}
		return s.addStartEvents(ctx, tx, string(ids), now) // webhooks.go
	})
	if err != nil || len(claimed) == 0 {
		return nil, err
	}
	out, unreadable, err := s.readClaimed(ctx, token, claimed, checkpoint)
	if err != nil {
		if herr := s.handBackClaim(ctx, token, claimed); herr != nil {
			err = errors.Join(err, fmt.Errorf("hand the claim back: %w", herr))
		}
		return nil, err
	}
	for _, t := range unreadable {
		if rerr := s.holdUnreadable(ctx, token, t, now); rerr != nil {
			// Its lease runs out and a later claim tries again.
			err = errors.Join(err, rerr)
		}
	}
	// Earliest due first, as the claim chose them.
	slices.SortFunc(out, func(a, b *gengate.Task) int { return a.RunAt.Compare(b.RunAt) })
	return out, err
}

// readClaimed reads the claimed tasks from the read pool. A task moved to
// submitting by the claim's checkpoint is given back with the status it
// had before (queued) and Checkpointed set, as ClaimSteps promises. The
// tasks whose rows could not be decoded are returned apart, with the
// columns that could be read.
func (s *DB) readClaimed(ctx context.Context, token string, claimed []claimedRow, checkpoint bool) (out, unreadable []*gengate.Task, err error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE rowid IN (SELECT value FROM json_each($1))`, claimedRowids(claimed))
	if err != nil {
		return nil, nil, fmt.Errorf("read the claimed tasks: %w", err)
	}
	defer rows.Close()
	var raw []taskRow
	for rows.Next() {
		r, err := scanTaskRow(rows)
		if err != nil {
			return nil, nil, fmt.Errorf("read the claimed tasks: %w", err)
		}
		raw = append(raw, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read the claimed tasks: %w", err)
	}
	if len(raw) != len(claimed) {
		return nil, nil, fmt.Errorf("read the claimed tasks: %d of %d found", len(raw), len(claimed))
	}
	queued := make(map[string]bool, len(claimed))
	prev := map[string]string{}
	for _, c := range claimed {
		queued[c.id] = c.queued
		if c.prevLease != "" {
			prev[c.id] = c.prevLease
		}
	}
	out = make([]*gengate.Task, 0, len(raw))
	for _, r := range raw {
		if r.t.LeaseToken != token {
			return nil, nil, fmt.Errorf("read the claimed tasks: task %s is not held by this claim", r.t.ID)
		}
		if checkpoint && queued[r.t.ID] {
			r.t.Status, r.t.Checkpointed = gengate.StatusQueued, true
		}
		r.t.TakenOver = prev[r.t.ID]
		t, err := r.decode()
		if err != nil {
			r.t.ErrorMessage = err.Error()
			unreadable = append(unreadable, r.t)
			continue
		}
		out = append(out, t)
	}
	return out, unreadable, nil
}

// expiredLeases returns, by rowid, the lease tokens of the rows the
// claim at now is about to take whose lease ran out under another claim.
func (s *DB) expiredLeases(ctx context.Context, tx *sql.Tx, now time.Time, limit int) (map[int64]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, lease_token FROM tasks WHERE rowid IN (`+
		strings.ReplaceAll(s.dueTasks(limit), "$3", "$1")+`) AND lease_token <> ''`, ms(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out map[int64]string
	for rows.Next() {
		var rowid int64
		var tok string
		if err := rows.Scan(&rowid, &tok); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[int64]string{}
		}
		out[rowid] = tok
	}
	return out, rows.Err()
}

// claimedRowids is the claimed rows' rowids as a JSON array, for
// json_each.
func claimedRowids(claimed []claimedRow) string {
	ids := make([]byte, 0, 2+len(claimed)*8)
	ids = append(ids, '[')
	for i, c := range claimed {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, c.rowid, 10)
	}
	return string(append(ids, ']'))
}

// handBackClaim undoes a claim whose tasks could not be read: leases
// cleared, the attempt not counted, the tasks it checkpointed queued
// again. Nothing has run them.
func (s *DB) handBackClaim(ctx context.Context, token string, claimed []claimedRow) error {
	queued := []string{}
	for _, c := range claimed {
		if c.queued {
			queued = append(queued, c.id)
		}
	}
	q, err := json.Marshal(queued)
	if err != nil {
		return err
	}
	return s.write(context.WithoutCancel(ctx), func(ctx context.Context, db dbtx) error {
		_, err := db.ExecContext(ctx, `UPDATE tasks SET lease_token = '', lease_until = 0, attempts = attempts - 1,
			status = CASE WHEN status = 'submitting' AND id IN (SELECT value FROM json_each($2)) THEN 'queued' ELSE status END
			WHERE rowid IN (SELECT value FROM json_each($1)) AND lease_token = $3`, claimedRowids(claimed), string(q), token)
		return err
	})
}

// holdUnreadable sends a claimed task whose row could not be decoded to
// review (gengate.ReviewUnreadable), under the claim's lease: no step can
// run it, and its credits stay held for an operator.
func (s *DB) holdUnreadable(ctx context.Context, token string, t *gengate.Task, now time.Time) error {
	err := s.write(context.WithoutCancel(ctx), func(ctx context.Context, db dbtx) error {
		res, err := db.ExecContext(ctx, `UPDATE tasks SET status = 'needs_review', review_reason = $1, lease_token = '', lease_until = 0,
			updated_at = $2 WHERE id = $3 AND lease_token = $4`, gengate.ReviewUnreadable, ms(now), t.ID, token)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return gengate.Errorf(gengate.EConflict, "task %s changed under this claim", t.ID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hold unreadable task %s (%s) for review: %w", t.ID, t.ErrorMessage, err)
	}
	return nil
}
