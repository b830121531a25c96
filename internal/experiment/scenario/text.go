package scenario

// onOff says a switch's state in a sentence.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// boolValue is a figure for a yes or no: 1 or 0.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// errText is err's message, or orElse for no error.
func errText(err error, orElse string) string {
	if err != nil {
		return err.Error()
	}
	return orElse
}
