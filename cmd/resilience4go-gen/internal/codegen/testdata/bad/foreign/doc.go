// Package foreign holds the package the foreign_* cases embed.
package foreign
