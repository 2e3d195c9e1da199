// Package buildsuffix declares its interface in a file for some platforms only.
package buildsuffix
