//go:build race

package scenario

const raceSlowdown = 3
