package lessons

// renameExperiments reads the experiments l names by a name they went by
// before they were renamed (Sources.RenamedExperiments: old name to
// current) as their current names, wherever a lesson names one: the
// front matter, @try lines and predict questions. Everything after the
// load (checks, screens, saved progress) then knows one name.
func renameExperiments(l *Lesson, renamed map[string]string) {
	if len(renamed) == 0 || l == nil {
		return
	}
	current := func(name string) string {
		if now, ok := renamed[name]; ok {
			return now
		}
		return name
	}
	for i, e := range l.Experiments {
		l.Experiments[i] = current(e)
	}
	for p := range l.Pages {
		for i, t := range l.Pages[p].Tries {
			if t.Kind == TryExperiment {
				l.Pages[p].Tries[i].Name = current(t.Name)
			}
		}
	}
	if l.Quiz == nil {
		return
	}
	for _, q := range l.Quiz.Questions {
		if q.Experiment != "" {
			q.Experiment = current(q.Experiment)
		}
	}
}
