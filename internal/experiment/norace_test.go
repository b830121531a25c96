//go:build !race

package experiment

const raceSlowdown = 1
