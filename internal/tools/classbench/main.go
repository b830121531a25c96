// Command classbench measures the class-mode figures the playground
// promises, on an in-process TLS cluster with authentication on: the
// instructor's board for 200 learners read and drawn, the time from a
// learner's pass to the board's update, and the cost of one learner's
// publication. `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/classboard"
)

func main() {
	learners := flag.Int("learners", 200, "learners on the roster")
	runs := flag.Int("runs", 21, "runs per figure")
	boardChild := flag.String("board-child", "", "internal: run the board against this settings file and report its memory")
	flag.Parse()
	if *boardChild != "" {
		runBoardChild(*boardChild)
		return
	}
	dir, err := os.MkdirTemp("", "classbench-")
	check(err)
	defer os.RemoveAll(dir)
	os.Setenv("PLAYGROUND_STATE_DIR", dir)
	ctx := context.Background()
	c, err := classtest.Start(ctx, dir, 1, true)
	check(err)
	defer c.Close()
	root, err := c.Root.New(nil)
	check(err)
	defer root.Close()

	course := benchCourse(*runs)
	roster := seedClass(ctx, c, root, *learners, course)
	status, board := statusFigure(ctx, root, course, *runs)
	publish, update := passFigures(ctx, c, root, board, roster[0].Name, *runs)
	flood := floodFigure(ctx, c, root, roster[len(roster)-1].Name)

	fmt.Printf("%-52s %10s %10s %10s\n", "class figure (TLS + auth, 1 member)", "median", "p99", "bar")
	row(fmt.Sprintf("class status, %d learners: read + draw", *learners), status, "100ms")
	row("one learner's publication", publish, "5ms")
	row("a pass reaches the watching board", update, "1s")
	row(fmt.Sprintf("board draw, %d learners, one flooding", *learners), flood.renders, "100ms")
	fmt.Printf("%-52s %10s %10s %10s\n", fmt.Sprintf("board peak memory, %d learners, one flooding", *learners), fmt.Sprintf("%d MB", flood.peakMB), "", "150 MB")
}

// seedClass puts n learners (password "pw") on the class's roster, each
// having published something, as in the middle of a class.
func seedClass(ctx context.Context, c *classtest.Cluster, root *clientv3.Client, n int, course class.Course) []class.Learner {
	var roster []class.Learner
	for i := range n {
		roster = append(roster, class.Learner{Name: fmt.Sprintf("learner%03d", i), Password: "pw"})
	}
	_, err := class.Setup(ctx, c.Root, root, roster, nil)
	check(err)
	for i, l := range roster {
		s := class.Summary{Learner: l.Name, Updated: time.Now(), Lessons: map[string]class.LessonSummary{}, Labs: map[string]class.LabSummary{}}
		for j := range i % 10 {
			s.Lessons[course.Lessons[j].ID] = class.LessonSummary{Read: []int{0, 1, 2, 3, 4, 5}, QuizTaken: true, QuizBest: 0.8}
			s.Labs[course.Labs[j%9]] = class.LabSummary{Passed: time.Now()}
		}
		b, _ := json.Marshal(s)
		_, err := root.Put(ctx, class.Prefix(l.Name)+class.SummaryKey, string(b))
		check(err)
	}
	return roster
}

// statusFigure is figure 1, class status: read the roster and every
// summary, then draw, runs times; it returns the last board read.
func statusFigure(ctx context.Context, root *clientv3.Client, course class.Course, runs int) ([]time.Duration, *class.Board) {
	var status []time.Duration
	var board *class.Board
	for range runs {
		t0 := time.Now()
		var err error
		board, err = class.LoadBoard(ctx, root)
		check(err)
		m := classboard.New(classboard.Options{Course: course, Snapshot: board.Snapshot, Where: "bench"})
		_ = m.Render()
		status = append(status, time.Since(t0))
	}
	return status, board
}

// passFigures are figures 2 and 3: learner (password "pw") passes labs
// runs times; the publication's cost, and the time until board, watching,
// has it.
func passFigures(ctx context.Context, c *classtest.Cluster, root *clientv3.Client, board *class.Board, learner string, runs int) (publish, update []time.Duration) {
	changed := make(chan string, 16)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go board.Watch(wctx, root, func(name string) { changed <- name })
	time.Sleep(200 * time.Millisecond) // let the watches register
	ada := c.Plain
	ada.User, ada.Password = learner, "pw"
	r, err := embedetcd.Connect(ctx, ada, class.Prefix(ada.User))
	check(err)
	defer r.Close()
	cli, err := r.Client()
	check(err)
	pub := class.NewPublisher(cli.KV)
	p := progress.New()
	check(pub.Publish(ctx, class.FromProgress(ada.User, p))) // first read of the key
	for i := range runs {
		p.MarkPageRead("lesson-01", i, time.Now())
		s := class.FromProgress(ada.User, p)
		t0 := time.Now()
		check(pub.Publish(ctx, s))
		publish = append(publish, time.Since(t0))
		for name := range changed {
			if name == ada.User {
				break
			}
		}
		update = append(update, time.Since(t0))
	}
	return publish, update
}

// benchCourse is a course of ten 6-page lessons and nine labs; the first
// lesson has turns more pages, for figure 2's page turns.
func benchCourse(turns int) class.Course {
	course := class.Course{Labs: []string{"01_cas", "02_lock", "03_lease", "04_fencing", "05_etcd_lock", "06_fenced_write", "07_election", "08_herd", "09_shards"}}
	for i := range 10 {
		course.Lessons = append(course.Lessons, class.CourseLesson{ID: fmt.Sprintf("lesson-%02d", i+1), Pages: 6})
	}
	course.Lessons[0].Pages += turns
	return course
}

func row(name string, d []time.Duration, bar string) {
	slices.Sort(d)
	p99 := d[min(len(d)-1, len(d)*99/100)]
	fmt.Printf("%-52s %10s %10s %10s\n", name, d[len(d)/2].Round(10*time.Microsecond), p99.Round(10*time.Microsecond), bar)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "classbench:", err)
		os.Exit(1)
	}
}
