package schedule_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
)

// TestAJobOfADeadInstanceIsTakenOverByAnother: a check left running by an
// instance that died an hour ago (its row says so: running, attempted by
// it) is rescued by a live instance's leader and run there, once.
func TestAJobOfADeadInstanceIsTakenOverByAnother(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	h := openPostgres(t, dsn)
	obs := &counter{}
	ctx := context.Background()
	s, err := schedule.Open(ctx, schedule.Options{DB: schedule.Database{PostgresDSN: dsn}, Monitor: newMonitor(config(time.Minute, "a"), h, obs),
		NoPeriodic: true, PollInterval: 20 * time.Millisecond, ID: "live-instance"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, "a", "check", 60); err != nil {
		s.Close()
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	tag, err := conn.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour',
		attempted_by = ARRAY['dead-instance'] WHERE kind = 'payability_monitor_check'`)
	conn.Close(ctx)
	if err != nil || tag.RowsAffected() != 1 {
		s.Close()
		t.Fatalf("marking the job as the dead instance's: %v (%d rows)", err, tag.RowsAffected())
	}
	if err := s.Start(ctx); err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, s) })
	got := waitFor(t, h, "a", atLeast(1))
	stop(t, s)
	if len(got) != 1 || got[0].Slot != 60 || obs.total("a") != 1 {
		t.Errorf("rows %+v after %d runs, want the dead instance's slot 60 run once", got, obs.total("a"))
	}
}
