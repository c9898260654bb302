module locklab/libraries/go

go 1.25.0

require (
	github.com/bsm/redislock v0.10.0
	github.com/go-redsync/redsync/v4 v4.17.0
	github.com/redis/go-redis/v9 v9.21.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
)
