package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
)

// store is the one adapter between ingest and meilisearch-go. Every call
// that may meet an unreachable or restarting Meilisearch goes through retry,
// which backs off until the call succeeds, fails for a reason retrying cannot
// fix, or ctx ends. Nothing else in the package touches the SDK.
type store struct {
	client   meilisearch.ServiceManager
	logger   *slog.Logger
	retryMin time.Duration
	retryMax time.Duration
	poll     time.Duration
}

// TaskError is a Meilisearch task that did not succeed, with Meilisearch's
// own error code and message.
type TaskError struct {
	Index   string
	UID     int64
	Type    string
	Status  string
	Code    string
	Message string
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("meilisearch task %d (%s on %s) %s: %s: %s", e.UID, e.Type, e.Index, e.Status, e.Code, e.Message)
}

// errTaskLost means Meilisearch no longer knows a task we enqueued (its data
// was reset under us); the write must be sent again.
var errTaskLost = errors.New("meilisearch task lost")

// transient reports whether err is worth retrying: the server could not be
// reached, timed out, or answered with a 5xx or 429.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The SDK wraps its own per-request timeouts; our ctx is checked by retry.
		return true
	}
	var me *meilisearch.Error
	if errors.As(err, &me) {
		switch me.ErrCode {
		case meilisearch.MeilisearchCommunicationError, meilisearch.MeilisearchTimeoutError, meilisearch.MeilisearchMaxRetriesExceeded:
			return true
		case meilisearch.ErrCodeResponseUnmarshalBody:
			return me.StatusCode == 0 || me.StatusCode >= 500
		}
		return me.StatusCode == http.StatusTooManyRequests || me.StatusCode >= 500 || me.StatusCode == 0
	}
	var se *meili.StatusError
	if errors.As(err, &se) {
		return se.Status == http.StatusTooManyRequests || se.Status >= 500
	}
	return true // not an SDK error: a network error from below
}

// apiCode returns Meilisearch's error code for err ("index_not_found", ...) or "".
func apiCode(err error) string {
	var me *meilisearch.Error
	if errors.As(err, &me) {
		return me.MeilisearchApiError.Code
	}
	return ""
}

// retry runs op until it succeeds, fails permanently, or ctx ends. It backs
// off exponentially between retryMin and retryMax while Meilisearch is down.
func (s *store) retry(ctx context.Context, what string, op func(ctx context.Context) error) error {
	wait := s.retryMin
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			if attempt > 1 {
				s.logger.Info("meilisearch reachable again", "op", what, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		}
		if !transient(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if attempt == 1 || attempt%10 == 0 {
			s.logger.Warn("meilisearch unavailable, retrying", "op", what, "attempt", attempt, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
		if wait > s.retryMax {
			wait = s.retryMax
		}
	}
}

// await polls task uid until it finishes. A task Meilisearch no longer knows
// yields errTaskLost; a failed task yields a *TaskError.
func (s *store) await(ctx context.Context, uid int64) error {
	poll := s.poll
	var task *meilisearch.Task
	err := s.retry(ctx, "await task", func(ctx context.Context) error {
		for {
			t, err := s.client.GetTaskWithContext(ctx, uid)
			if err != nil {
				if apiCode(err) == "task_not_found" {
					return errTaskLost
				}
				return err
			}
			switch t.Status {
			case meilisearch.TaskStatusSucceeded, meilisearch.TaskStatusFailed, meilisearch.TaskStatusCanceled:
				task = t
				return nil
			}
			timer := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
			// Poll fast at first (small writes finish in tens of ms), then back
			// off to 25ms: each poll is cheap, and freshness depends on it.
			if poll < 25*time.Millisecond {
				poll += poll / 2
			}
		}
	})
	if err != nil {
		if errors.Is(err, errTaskLost) {
			return errTaskLost
		}
		return err
	}
	if task.Status != meilisearch.TaskStatusSucceeded {
		return &TaskError{Index: task.IndexUID, UID: uid, Type: string(task.Type), Status: string(task.Status),
			Code: task.Error.Code, Message: task.Error.Message}
	}
	return nil
}

// task is one write to Meilisearch: how to send it, and its uid once
// enqueued. All our writes are idempotent (full replacements, deletes by
// id, partial updates of known documents), so sending one twice is harmless.
type task struct {
	what string
	send func(ctx context.Context) (*meilisearch.TaskInfo, error)
	uid  int64
}

// enqueue sends t, retrying while Meilisearch is unreachable.
func (s *store) enqueue(ctx context.Context, t *task) error {
	return s.retry(ctx, t.what, func(ctx context.Context) error {
		info, err := t.send(ctx)
		if err != nil {
			return err
		}
		t.uid = info.TaskUID
		return nil
	})
}

// finish waits for an enqueued t, sending it again when Meilisearch lost it
// (restarted without its data).
func (s *store) finish(ctx context.Context, t *task) error {
	for {
		err := s.await(ctx, t.uid)
		if errors.Is(err, errTaskLost) {
			s.logger.Warn("meilisearch lost a task, sending again", "op", t.what, "task", t.uid)
			if err := s.enqueue(ctx, t); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.what, err)
		}
		return nil
	}
}

// write enqueues one task and waits for it.
func (s *store) write(ctx context.Context, what string, send func(ctx context.Context) (*meilisearch.TaskInfo, error)) error {
	t := &task{what: what, send: send}
	if err := s.enqueue(ctx, t); err != nil {
		return err
	}
	return s.finish(ctx, t)
}

// ensureIndex creates index uid with primary key "id" unless it exists.
func (s *store) ensureIndex(ctx context.Context, uid string) error {
	var exists bool
	err := s.retry(ctx, "get index "+uid, func(ctx context.Context) error {
		_, err := s.client.GetIndexWithContext(ctx, uid)
		if err == nil {
			exists = true
			return nil
		}
		if apiCode(err) == "index_not_found" {
			return nil
		}
		return err
	})
	if err != nil || exists {
		return err
	}
	err = s.write(ctx, "create index "+uid, func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.CreateIndexWithContext(ctx, &meilisearch.IndexConfig{Uid: uid, PrimaryKey: "id"})
	})
	var te *TaskError
	if errors.As(err, &te) && te.Code == "index_already_exists" {
		return nil
	}
	return err
}

// addTask replaces whole documents (one JSON object per line).
func (s *store) addTask(index string, body []byte) *task {
	return &task{what: "add documents to " + index, send: func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.Index(index).AddDocumentsNdjsonWithContext(ctx, body, nil)
	}}
}

// patch partially updates documents. Meilisearch 1.21 has no way to skip
// ids that do not exist (skipCreation came later), so callers patch only ids
// they know are indexed and that no delete in the same batch touches.
func (s *store) patchTask(index string, docs []map[string]any) *task {
	return &task{what: "update documents in " + index, send: func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.Index(index).UpdateDocumentsWithContext(ctx, docs, nil)
	}}
}

// upsertTask replaces whole documents given as values the SDK marshals.
func (s *store) upsertTask(index string, docs any) *task {
	return &task{what: "add documents to " + index, send: func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.Index(index).AddDocumentsWithContext(ctx, docs, nil)
	}}
}

// deleteTask deletes documents by primary key.
func (s *store) deleteTask(index string, ids []string) *task {
	return &task{what: "delete documents from " + index, send: func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.Index(index).DeleteDocumentsWithContext(ctx, ids, nil)
	}}
}

// scan reads every document of index with the given fields, page by page,
// and hands each raw document to fn.
func (s *store) scan(ctx context.Context, index string, fields []string, ids []string, fn func(raw []byte) error) error {
	const page = 5000
	for offset := int64(0); ; offset += page {
		var res meilisearch.DocumentsResult
		q := &meilisearch.DocumentsQuery{Offset: offset, Limit: page, Fields: fields, Ids: ids}
		err := s.retry(ctx, "read documents of "+index, func(ctx context.Context) error {
			res = meilisearch.DocumentsResult{}
			return s.client.Index(index).GetDocumentsWithContext(ctx, q, &res)
		})
		if err != nil {
			return err
		}
		for _, h := range res.Results {
			raw, err := json.Marshal(h)
			if err != nil {
				return fmt.Errorf("read documents of %s: %w", index, err)
			}
			if err := fn(raw); err != nil {
				return err
			}
		}
		if int64(len(res.Results)) < page {
			return nil
		}
	}
}
