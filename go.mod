module github.com/resilience4go/resilience4go

go 1.26

require (
	github.com/samber/lo v1.53.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.22.0 // indirect
)
