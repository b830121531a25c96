package demo

import "testing"

func TestStep1_Works(t *testing.T) {}

func TestStep2_Fast(t *testing.T) {}

func helper() {}
