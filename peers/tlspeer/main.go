// Command tlspeer is the test peer of the kubelet API attack suite, standard library only.
//
//	tlspeer get -url https://127.0.0.1:10250/pods [-cert chain.pem -key key.pem]
//	            [-token T] [-tls 1.2|1.3] [-method GET]
//
// sends one HTTPS request presenting exactly the certificate chain and private key it is
// given, even when they do not belong together (Go's tls.X509KeyPair would refuse that pair,
// and Deno's client cannot send it), and prints one JSON line: the HTTP status and body, or
// the error that ended the connection before an answer. The server's own certificate is not
// checked: the suite attacks the server's checks of the client.
//
//	tlspeer serve -ca bundle.pem -cert serving.pem -key serving.key
//
// is the oracle of what upstream answers: the kubelet's TLS settings (tls.RequestClientCert
// with the client CA pool, as cmd/kubelet/app/server.go sets them) and k8s.io/apiserver's
// x509 authenticator (Authenticator.AuthenticateRequest: the leaf verified against the CA
// pool with the presented intermediates and ExtKeyUsageClientAuth). It prints the port on
// its first line, answers 200 and the common name for a verified chain, else 401
// "Unauthorized", and stops when its standard input closes.
package main

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

type result struct {
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tlspeer get|serve [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "get":
		get(os.Args[2:])
	case "serve":
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q: get or serve\n", os.Args[1])
		os.Exit(2)
	}
}

func get(args []string) {
	flag := flag.NewFlagSet("get", flag.ExitOnError)
	url := flag.String("url", "", "the URL to GET")
	certFile := flag.String("cert", "", "PEM chain to present, leaf first")
	keyFile := flag.String("key", "", "PEM private key to sign the handshake with")
	token := flag.String("token", "", "bearer token")
	version := flag.String("tls", "", "pin the TLS version: 1.2 or 1.3")
	method := flag.String("method", "GET", "HTTP method")
	_ = flag.Parse(args)
	out, err := run(*url, *certFile, *keyFile, *token, *version, *method)
	if err != nil {
		out = result{Error: err.Error()}
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}

func run(url, certFile, keyFile, token, version, method string) (result, error) {
	config := &tls.Config{InsecureSkipVerify: true}
	switch version {
	case "1.2":
		config.MinVersion, config.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	case "1.3":
		config.MinVersion, config.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	case "":
	default:
		return result{}, fmt.Errorf("-tls must be 1.2 or 1.3, not %q", version)
	}
	if certFile != "" {
		cert, err := loadPair(certFile, keyFile)
		if err != nil {
			return result{}, err
		}
		config.Certificates = []tls.Certificate{cert}
	}
	client := &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{TLSClientConfig: config, DisableKeepAlives: true},
	}
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return result{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return result{}, err
	}
	return result{Status: resp.StatusCode, Body: string(body)}, nil
}

// loadPair builds the client certificate without checking that the key matches it.
func loadPair(certFile, keyFile string) (tls.Certificate, error) {
	var cert tls.Certificate
	chain, err := os.ReadFile(certFile)
	if err != nil {
		return cert, err
	}
	for {
		var block *pem.Block
		block, chain = pem.Decode(chain)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			cert.Certificate = append(cert.Certificate, block.Bytes)
		}
	}
	if len(cert.Certificate) == 0 {
		return cert, fmt.Errorf("%s: no PEM certificate", certFile)
	}
	keyPem, err := os.ReadFile(keyFile)
	if err != nil {
		return cert, err
	}
	block, _ := pem.Decode(keyPem)
	if block == nil {
		return cert, fmt.Errorf("%s: no PEM key", keyFile)
	}
	cert.PrivateKey, err = parseKey(block.Bytes)
	return cert, err
}

func parseKey(der []byte) (crypto.Signer, error) {
	if key, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if signer, ok := key.(crypto.Signer); ok {
			return signer, nil
		}
	}
	if key, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return key, nil
	}
	if key, err := x509.ParseECPrivateKey(der); err == nil {
		return key, nil
	}
	return nil, errors.New("unsupported private key (PKCS#8, PKCS#1 or SEC 1 expected)")
}

func serve(args []string) error {
	flags := flag.NewFlagSet("serve", flag.ExitOnError)
	caFile := flags.String("ca", "", "client CA bundle (PEM)")
	certFile := flags.String("cert", "", "serving certificate (PEM)")
	keyFile := flags.String("key", "", "serving key (PEM)")
	_ = flags.Parse(args)
	caPem, err := os.ReadFile(*caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPem) {
		return fmt.Errorf("%s: no PEM certificate", *caFile)
	}
	serving, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	server := &http.Server{
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{serving},
			ClientCAs:    roots,
			ClientAuth:   tls.RequestClientCert,
			MinVersion:   tls.VersionTLS12,
		},
		ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name, err := authenticate(r, roots)
			if err != nil {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, name)
		}),
	}
	return server.ServeTLS(listener, "", "")
}

func authenticate(r *http.Request, roots *x509.CertPool) (string, error) {
	peers := r.TLS.PeerCertificates
	if len(peers) == 0 {
		return "", errors.New("no client certificate")
	}
	options := x509.VerifyOptions{
		Roots:         roots,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, intermediate := range peers[1:] {
		options.Intermediates.AddCert(intermediate)
	}
	if _, err := peers[0].Verify(options); err != nil {
		return "", err
	}
	return peers[0].Subject.CommonName, nil
}
