package internal
