import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationWeb
import Testing
import WebAccounts

/// The page's remembered browsers (`lineup_device`, docs/web.md "Remembered browsers"),
/// through the router in virtual time: a remembered browser logs in past the name's spent
/// limit, and is forgotten after 3 wrong passwords in a row from it, so a stolen cookie is
/// worth 3 guesses and no more.
@Suite struct RememberedBrowserTests {
    /// A login as trainer1 carrying `device` (a `lineup_device` token) when given; the answer
    /// and the device cookie it sets, if any.
    func login(_ client: some TestClientProtocol, _ password: String, device: String? = nil) async throws -> (
        HTTPResponse.Status, String?
    ) {
        var headers: HTTPFields = [.origin: origin, .contentType: "application/json"]
        if let device { headers[.cookie] = "\(WebApp.deviceCookieName)=\(device)" }
        let response = try await client.post(
            "/api/login", json: #"{"name":"trainer1","password":"\#(password)"}"#, headers: headers)
        let set = response.headers[values: .setCookie].first { $0.hasPrefix(WebApp.deviceCookieName + "=") }
        let token = set.map { String($0.split(separator: ";")[0].dropFirst(WebApp.deviceCookieName.count + 1)) }
        return (response.status, token)
    }

    @Test func aRememberedBrowserIsForgottenAfterThreeWrongPasswordsInARow() async throws {
        let clock = VirtualClock()
        let state = WebState(users: try makeUsers(), link: CountingLink(), refusedLoginWait: 0, now: { clock.now })
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let right = "trainer1-password"
            // Tom's browser logs in: the page remembers it.
            let (first, set) = try await login(client, right)
            #expect(first == .ok)
            let device = try #require(set, "a right password set no lineup_device cookie")
            // Someone spends the name's limit (and this address's): a browser the page does not
            // remember is refused even with the right password...
            for _ in 0..<4 { #expect(try await login(client, "wrong-password").0 == .unauthorized) }
            #expect(try await login(client, right).0 == .tooManyRequests)
            // ...but tom's is not. Two wrong passwords from it are not three in a row: the right
            // one after them still gets in, and renews the same cookie.
            for _ in 0..<2 { #expect(try await login(client, "wrong-password", device: device).0 == .unauthorized) }
            let (again, renewed) = try await login(client, right, device: device)
            #expect(again == .ok)
            #expect(renewed == device)
            // A minute later every bucket is full again; the name's is spent once more.
            clock.advance(60)
            for _ in 0..<5 { #expect(try await login(client, "wrong-password").0 == .unauthorized) }
            #expect(try await login(client, right).0 == .tooManyRequests)
            // Three wrong passwords in a row from tom's browser: it is forgotten for tom, so its
            // right password now meets the name's spent limit like any other browser's.
            for _ in 0..<3 { #expect(try await login(client, "wrong-password", device: device).0 == .unauthorized) }
            #expect(try await login(client, right, device: device).0 == .tooManyRequests)
        }
    }
}
