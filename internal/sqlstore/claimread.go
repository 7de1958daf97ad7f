package sqlstore

// Claims on SQLite that read their tasks after the commit.
//
// A claim is a write, so on SQLite it runs on the one writer, which every
// other write waits for (groupcommit.go). Returning the claimed rows from
// the claim's UPDATE made the writer copy every column of every task it
// claimed (prompt, options, inputs, route) and decode their JSON, for
// nothing the claim itself needs. So the writer's selection returns only
// each claimed row's rowid, id, status and lease (ClaimSteps' checkpoint
// needs the queued ones), and the tasks are read after the commit from the read
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
//
// In the writer the claim is one selection and one UPDATE per kind of row,
// found by rowid: the selection (claimSelection) returns each due row's
// rowid, id, status, the lease it held (ClaimSteps: the one it takes over,
// read before the update rewrites it) and whether it is a queued
// prediction whose webhook wants a start event; the claimed queued rows
// are leased and moved to submitting in one UPDATE (ClaimSteps), the
// others leased in another. Nothing else writes between them: the
// transaction is the one writer's, and took the write lock at BEGIN.
// (Before, the claim leased every row in one UPDATE, read the lost leases
// in a query of their own, rewrote the queued rows to submitting in a
// second UPDATE, and looked for start events of every queued row in a
// fourth statement that almost always found none.)
func (s *DB) claimThenRead(ctx context.Context, token string, now time.Time, lease time.Duration, limit int, checkpoint bool) ([]*gengate.Task, error) {
	selection := s.claimSelection(limit)
	var claimed []claimedRow
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		claimed = claimed[:0]
		rows, err := tx.QueryContext(ctx, selection, ms(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		var starts []string
		for rows.Next() {
			var c claimedRow
			var status, prev string
			var start bool
			if err := rows.Scan(&c.rowid, &c.id, &status, &prev, &start); err != nil {
				return err
			}
			c.queued = status == string(gengate.StatusQueued)
			if checkpoint {
				c.prevLease = prev
				if start {
					starts = append(starts, c.id)
				}
			}
			claimed = append(claimed, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if len(claimed) == 0 {
			return nil
		}
		if err := s.leaseClaimed(ctx, tx, token, now, lease, claimed, checkpoint); err != nil {
			return err
		}
		if len(starts) == 0 {
			return nil
		}
		ids, err := json.Marshal(starts)
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

// claimSelection is the SQLite claim's selection of up to limit due rows
// ($1, now; dueTasks' walk of tasks_due): each row's rowid, id, status,
// lease token, and whether it is queued with a prediction webhook whose
// filter has start (addStartEvents' condition, one look-up of
// task_webhooks' primary key per queued row).
func (s *DB) claimSelection(limit int) string {
	return `SELECT rowid, id, status, lease_token, CASE WHEN status = 'queued' THEN EXISTS (SELECT 1 FROM task_webhooks w
		WHERE w.task_id = tasks.id AND ',' || w.events || ',' LIKE '%,start,%') ELSE 0 END` +
		strings.TrimPrefix(strings.ReplaceAll(s.dueTasks(limit), "$3", "$1"), "SELECT rowid")
}

// claimUpdates are the SQLite claim's UPDATEs of the selected rows ($1,
// their rowids as a JSON array): [0] leases them, [1] also moves them
// to submitting (ClaimSteps' checkpoint of the queued ones). Each row is
// found by its rowid; the lease's condition is checked again, and the
// claim fails unless every row is written.
var claimUpdates = [2]string{
	`UPDATE tasks SET lease_token = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
		FROM json_each($1) c WHERE tasks.rowid = c.value AND lease_until < $4`,
	`UPDATE tasks SET status = 'submitting', lease_token = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
		FROM json_each($1) c WHERE tasks.rowid = c.value AND lease_until < $4`,
}

// leaseClaimed writes the claim's lease on the selected rows, and with
// checkpoint moves the queued ones to submitting, in the claim's
// transaction.
func (s *DB) leaseClaimed(ctx context.Context, tx *sql.Tx, token string, now time.Time, lease time.Duration, claimed []claimedRow, checkpoint bool) error {
	var moved, leased []claimedRow
	if !checkpoint {
		leased = claimed
	} else {
		for _, c := range claimed {
			if c.queued {
				moved = append(moved, c)
			} else {
				leased = append(leased, c)
			}
		}
	}
	for i, rows := range [2][]claimedRow{leased, moved} {
		if len(rows) == 0 {
			continue
		}
		res, err := tx.ExecContext(ctx, claimUpdates[i], claimedRowids(rows), token, ms(now.Add(lease)), ms(now))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(rows)) {
			return fmt.Errorf("claim: %d of %d selected tasks leased: %v", n, len(rows), err)
		}
	}
	return nil
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
