//! Round five of the intent cues: compositional classes instead of phrases. A clause is
//! unsafe when an *action class* meets an *object class* in it and nothing negates or
//! reports it, whatever the words an author picks within each class:
//!
//! - set-aside verbs (ignore, override, supersede, skip, drop, replace, "treat as
//!   optional", ...) on the agent's own governing rules (the system prompt, the system's,
//!   developer's or operator's instructions, safety and privacy policies, filters,
//!   guardrails), as a command, in the passive or modal ("are to be overridden", "should be
//!   treated as optional", "is superseded by this skill"), as "instead of" or as following
//!   other text "even if it contradicts" them;
//! - destroying verbs (delete, wipe, purge, overwrite, format, kill) on system objects (the
//!   user's files and folders, snapshots, shadow copies, backups, configuration and system
//!   files, home directories, disks, processes and agents), in command position, after "by"
//!   ("by overwriting ..."), or in the passive ("should be deleted");
//! - sending verbs in the passive or as a wish ("were mirrored to a webhook", "should be
//!   uploaded to") aimed at a place outside (hosts, IP addresses, webhooks, chat and paste
//!   services, e-mail, third parties), and copy commands (`scp`, `rsync`, `curl`) to a host;
//! - widening verbs (grant, give, widen, expand, add to the allowed tools, mount) on
//!   capabilities (shell, exec, code execution, file writes, network, the Docker socket,
//!   sudo / root, the sandbox) for the agent, active or passive.
//!
//! All six languages (en, de, fr, es, it, pt), accents removed as in every view. A clause
//! negated before its verb ("must never be overridden", "do not add shell to ...") or
//! reporting a person's act ("the user said ...") is not a command.

use std::sync::LazyLock;

use regex::Regex;

use super::rx;

/// Negations, all languages (a word of the clause before the verb).
const NEG: &str = r"(?:never|not|no|don'?t|dont|cannot|can'?t|won'?t|shouldn'?t|mustn'?t|nicht|nie|niemals|kein\w*|ne|pas|jamais|nunca|jamas|non|mai|nao|nem)";

/// The governing rules of the agent, named with what makes them the agent's own.
const GOV_RULE: &str = r"(?:(?:system|developer'?s?|operator'?s?|safety|security|privacy|content|original|initial|prior|previous|earlier|existing|default|built in|core|base|your|its|the agent'?s?|the assistant'?s?|the model'?s?|the system'?s?|the operator'?s?|the developer'?s?|platform|moderation)\s+(?:\w+\s+)?(?:prompts?|instructions?|rules?|polic(?:y|ies)|guidelines?|guidance|filters?|guardrails?|safeguards?|restrictions?|constraints?|settings|directives?|messages?|limits?|preferences)|system prompts?|(?:user'?s?|their) (?:privacy |data )?(?:preferences|wishes|opt ?outs?|consent|choices)|\w*(?:system|sicherheits|datenschutz|entwickler|betreiber|schutz)(?:regeln|vorgaben|anweisungen|richtlinien|filter|einschrankungen|prompt)|(?:regles?|consignes?|instructions?|politiques?|filtres?|directives?|restrictions?|limites?|protections?|garde ?fous?) (?:de |du |des |d'|de la )?(?:la |le |l')?(?:systeme|securite|confidentialite|developpeur|operateur|moderation|protection)|(?:reglas?|normas?|instrucciones|instruccion|politicas?|filtros?|directrices|restricciones|limites|protecciones|salvaguardas) (?:de |del |de la )?(?:la |el )?(?:sistema|seguridad|privacidad|desarrollador|operador|moderacion|proteccion)|(?:regole|istruzion[ei]|politiche|politica|filtri|filtro|direttive|restrizioni|limiti|protezioni|linee guida) (?:di |del |della |dello |dell')?(?:sistema|sicurezza|privacy|riservatezza|sviluppatore|operatore|moderazione|protezione)|(?:regras?|instrucoes|instrucao|politicas?|filtros?|diretrizes|restricoes|limites|protecoes|salvaguardas) (?:de |do |da |dos )?(?:sistema|seguranca|privacidade|desenvolvedor|operador|moderacao|protecao)|prompt (?:du |del |di |do )?(?:systeme|sistema))";

/// Verbs that set rules aside (imperatives and infinitives).
const SET_ASIDE: &str = r"(?:ignore|ignoring|disregard\w*|override|overrid\w*|overrule\w*|supersede\w*|bypass\w*|circumvent\w*|skip|skips|skipping|drop|drops|dropping|discard\w*|abandon\w*|ditch\w*|scrap|suspend\w*|waive\w*|neglect\w*|replace|replaces|replacing|swap\w*|forget|forgets|relax|relaxes|loosen\w*|weaken\w*|disable\w*|deactivat\w*|switch off|turn off|ignorier\w*|missacht\w*|uberschreib\w*|ubergeh\w*|uberspring\w*|umgeh\w*|verwirf\w*|verwerf\w*|ersetz\w*|deaktivier\w*|vergiss|ignor\w*|outrepass\w*|contourn\w*|saute\w*|sauter|ecarte\w*|ecarter|remplace\w*|abandonne\w*|desactive\w*|neglige\w*|oublie\w*|passe outre|salta\w*|saltat\w*|omit\w*|omite\w*|descarta\w*|reemplaza\w*|sustitu\w*|anula\w*|desactiva\w*|olvida\w*|elude\w*|scavalca\w*|sostitu\w*|annulla\w*|scarta\w*|disattiva\w*|dimentica\w*|aggira\w*|pula\w*|pule\w*|pular|descart\w*|substitu\w*|anule\w*|desative\w*|esquec\w*|contorne\w*|desconsider\w*)";

/// Participles and predicates that set rules aside (passive and modal forms).
const SET_ASIDE_PASSIVE: &str = r"(?:ignored|disregarded|overridden|overriden|overruled|superseded|replaced|bypassed|circumvented|skipped|dropped|discarded|abandoned|suspended|waived|lifted|relaxed|loosened|disabled|deactivated|void|voided|null and void|optional|treated as (?:\w+ )?(?:optional|suggestions?|advisory|non binding|guidance|defaults?|hints?)|(?:just|only|merely) (?:suggestions?|hints?|advice|defaults?|recommendations?)|non binding|no longer (?:valid|binding|in force|in effect|relevant)|ignoriert|ubergangen|uberschrieben|ersetzt|aufgehoben|ausgesetzt|deaktiviert|unverbindlich|optional|ignore(?:e|es|s)?|remplace(?:e|es|s)?|annule(?:e|es|s)?|suspendu\w*|outrepasse\w*|facultati\w*|optionnel\w*|ignorad\w*|reemplazad\w*|sustituid\w*|anulad\w*|suspendid\w*|opcional\w*|omitid\w*|ignorat\w*|sostituit\w*|annullat\w*|sospes\w*|facoltativ\w*|opzional\w*|scavalcat\w*|substituid\w*|desconsiderad\w*|suspens\w*)";

/// "by this skill", "durch diese Anweisung": the skill as the new authority.
const BY_SKILL: &str = r"(?:by|durch|von|par|por|da|pela|pelo) (?:this|these|the|diese\w*|cette|ces|esta|este|estas|questa|queste|questo) (?:skill|card|text|instructions?|note|fahigkeit|anweisung\w*|competence|consignes?|habilidad|instrucciones|abilita|istruzioni|habilidade|instrucoes)";

/// "instead of", "rather than", all languages.
const INSTEAD: &str = r"(?:instead of|rather than|in place of|over|(?:an)?statt|anstelle|au lieu de|plutot que|a la place de|en (?:lugar|vez) de|antes que|invece d(?:i|ella|el|ei|elle)|anziche|al posto d\w*|em vez de|ao inves de|no lugar de)";

/// Verbs of obeying (the other side of "instead of").
const OBEY: &str = r"(?:follow\w*|obey\w*|use|apply|heed|adopt|prioriti[sz]e|prefer|befolg\w*|folge\w*|gehorch\w*|suis|suivez|suivre|applique\w*|obei\w*|sigue|sigan|seguir|siga|segua|segui\w*|aplica\w*|applica\w*|obbedisc\w*|adota\w*|adopta\w*|adotta\w*)";

/// Contradicting a rule: "even if they contradict the system rules".
const CONTRADICT: &str = r"(?:contradict\w*|conflict\w* with|go(?:es)? against|clash\w* with|widersprech\w*|widerspricht|contredi\w*|contradig\w*|contradic\w*|contraddic\w*|contraddi\w*|in conflitto con|en conflicto con|en conflit avec|em conflito com|im widerspruch zu)";

fn neg_before(clause: &str) -> bool {
    static N: LazyLock<Regex> = LazyLock::new(|| rx(&format!(r"\b{NEG}\b")));
    N.is_match(clause)
}

/// The part of `sentence` from the last clause opening before `at` up to `at`.
fn clause_before(sentence: &str, at: usize) -> &str {
    let from = sentence[..at]
        .rfind([',', ';', ':', '(', ')', '"'])
        .map_or(0, |i| i + 1);
    &sentence[from..at]
}

/// A person's act reported ("the user said the rules were ignored").
fn reported(sentence: &str) -> bool {
    static R: LazyLock<Regex> = LazyLock::new(|| {
        rx(
            r"\b(?:user|users|speaker|someone|person|he|she|they|we|i|manager|colleague|friend|nutzer\w*|benutzer\w*|utilisat\w*|usuari[oa]s?|utente|falante)\b[^.;]{0,30}\b(?:says?|said|mentions?|mentioned|tells?|told|reports?|reported|complains?|complained|noticed|learn\w*|read|wrote|sagt|erzahlt|dit|raconte|dice|cuenta|racconta|diz|conta)\b",
        )
    });
    R.is_match(sentence)
}

// ---- constraints: the agent's rules set aside ------------------------------------------

fn rules_set_aside(sentence: &str) -> Option<String> {
    static ACTIVE: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<v>{SET_ASIDE})\b(?:\s+[\w']+){{0,6}}?\s+(?P<o>{GOV_RULE})\b"
        ))
    });
    static PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<o>{GOV_RULE})\b[^.;:]{{0,60}}?\b(?:is|are|was|were|be|been|get|gets|becomes?|count as|counts as|ist|sind|wird|werden|gilt|gelten als|est|sont|soit|soient|doit etre|doivent etre|es|son|sea|sean|debe ser|deben ser|se consideran?|e|sono|sia|siano|va|vanno|deve essere|devono essere|sao|seja|sejam|deve ser|devem ser|ficam?)\s+(?:now |hereby |henceforth |simply |just |to be |considered |treated as |(?:\w+ ){{0,2}})?(?P<v>{SET_ASIDE_PASSIVE})\b"
        ))
    });
    static BY: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<o>{GOV_RULE})\b[^.;]{{0,80}}?\b(?P<v>superseded|overridden|replaced|ersetzt|remplace\w*|reemplazad\w*|sustituid\w*|sostituit\w*|substituid\w*)\s+{BY_SKILL}\b|\b{BY_SKILL}\b[^.;]{{0,20}}\b(?P<v2>supersedes|overrides|replaces|ersetzt|remplace|reemplaza|sustituye|sostituisce|substitui)\b"
        ))
    });
    static RATHER: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<v>{OBEY})\b[^.;]{{0,60}}?\b{INSTEAD}\s+(?:\w+\s+){{0,2}}?(?P<o>{GOV_RULE})\b"
        ))
    });
    static AGAINST: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<v>{OBEY})\b[^.;]{{0,80}}?\b(?:even if|even when|even though|auch wenn|selbst wenn|meme si|meme quand|incluso si|aunque|anche se|anche quando|mesmo que|mesmo se)\b[^.;]{{0,40}}?\b{CONTRADICT}\b[^.;]{{0,30}}?(?P<o>{GOV_RULE})"
        ))
    });
    // "replace them with / put them in place of the system's": substituting other rules
    static SUBSTITUTE: LazyLock<Regex> = LazyLock::new(|| {
        rx(
            r"\b(?P<v>replace\w*|substitut\w*|swap\w*|ersetz\w*|remplace\w*|reemplaz\w*|sustitu\w*|sostitu\w*|substitu\w*)\b[^.;]{0,40}?\b(?P<o>(?:those|that|the ones?|quell[ae]|quelli|celles?|ceux|las|los|aquellas|aquelles|as|os|die|der|den) (?:of|del|della|dello|du|de la|de|do|da|des) (?:the )?(?:system|sistema|systeme|developer|operator|sviluppatore|desarrollador|desenvolvedor|entwicklers?|betreibers?|systems))\b",
        )
    });
    for (re, what) in [
        (&*ACTIVE, "set-aside verb"),
        (&*PASSIVE, "set aside (passive)"),
        (&*BY, "superseded by the skill"),
        (&*RATHER, "obeyed instead of"),
        (&*AGAINST, "obeyed against"),
        (&*SUBSTITUTE, "rules replaced"),
    ] {
        for c in re.captures_iter(sentence) {
            let m = c.get(0).expect("group 0");
            let v = c.name("v").or(c.name("v2")).expect("a verb group");
            // "must never be overridden", "do not skip the safety rules"
            let lead = clause_before(sentence, v.start());
            let lead = if what == "set-aside verb" {
                // the clause before the verb only
                lead
            } else {
                &sentence[m.start()..v.start()]
            };
            if neg_before(lead) || neg_before(clause_before(sentence, m.start())) {
                continue;
            }
            if reported(&sentence[..m.start()]) {
                continue;
            }
            let o = c.name("o").map_or("", |o| o.as_str());
            return Some(format!("{what} {:?} + rules {o:?}", v.as_str()));
        }
    }
    None
}

// ---- destructive: system objects destroyed ---------------------------------------------

const DESTROY: &str = r"(?:delete|deletes|deleting|erase\w*|wipe|wipes|wiping|purge\w*|destroy\w*|remove|removes|removing|overwrit\w*|shred\w*|format|formats|formatting|reformat\w*|nuke\w*|trash\w*|truncate\w*|clear|clears|clearing|empty|empties|emptying|zero|kill|kills|killing|terminate\w*|obliterat\w*|losch\w*|entfern\w*|vernicht\w*|uberschreib\w*|formatier\w*|leere\w*|beende\w*|supprim\w*|effac\w*|detrui\w*|ecras\w*|formate\w*|vide\w*|vider|tue|tuer|borra\w*|borre\w*|elimin\w*|destru\w*|sobrescrib\w*|formatea\w*|vacia\w*|mata\w*|cancella\w*|distrugg\w*|sovrascriv\w*|formatta\w*|svuota\w*|uccid\w*|apaga\w*|apague\w*|exclu\w*|sobrescrev\w*|esvazi\w*|mate|matar)";

/// System objects: what a memory skill has no business destroying.
const SYSTEM_OBJ: &str = r"(?:(?:user'?s?|their|his|her|the|all|every|any) (?:\w+ )?(?:documents?|downloads|desktop|photos|pictures|home) (?:folders?|director(?:y|ies)|files?)?|(?:documents|downloads|desktop|home|photos|user|system|config\w*|configuration|settings|boot|kernel|log|backup|shared|network|project|source|git) (?:folders?|director(?:y|ies)|files?|partitions?|volumes?|drives?|repositor(?:y|ies))|home director(?:y|ies)|/home\w*|/etc\w*|/var\w*|/usr\w*|/root|~/?\w*|c:\S*|system32|snapshots?|shadow (?:copies|copy)|volume shadow|restore points?|backups?|back ups?|recovery (?:points?|partitions?|images?)|disks?|hard (?:disks?|drives?)|drives?|partitions?|volumes?|file ?systems?|containers?|docker (?:images?|volumes?|containers?)|virtual machines?|vms?|repositor(?:y|ies)|registry|processes|process|daemons?|services?|(?:monitoring|security|antivirus|audit|logging|backup|watchdog) (?:agents?|processes?|services?|software|tools?|daemons?)|firewall|antivirus|watchdog|dateien|ordner|verzeichnis\w*|sicherung\w*|schnappsch\w*|festplatte\w*|partition\w*|prozess\w*|dienst\w*|konfigurations?dateien|systemdateien|fichiers?|dossiers?|repertoires?|sauvegardes?|instantanes?|disques?|processus|services?|fichiers? (?:de )?(?:configuration|systeme)|archivos|carpetas?|directorios?|copias de seguridad|respaldos?|instantaneas|discos?|procesos?|servicios?|archivos de (?:configuracion|sistema)|file di (?:configurazione|sistema)|cartell[ae]|directory|backup|istantanee|dischi|disco|processi|servizi|arquivos?|pastas?|diretorios?|copias de seguranca|instantaneos|processos|servicos|arquivos de (?:configuracao|sistema))";

/// Words that make a deletion an ordinary, narrow one.
const NARROW: &str = r"(?:temp|temporary|tmp|cache|cached|scratch|draft|duplicate\w*|outdated|stale|old|obsolete|unused|empty|the (?:memory|note|entry) (?:that|which)|that|which|you created|it created|you wrote|this skill created|temporar\w*|temporais|temporales|temporanei|vorlaufig\w*)";

fn system_destroyed(sentence: &str, toks: &[String]) -> Option<String> {
    static VERB: LazyLock<Regex> = LazyLock::new(|| super::intent::whole(DESTROY));
    static OBJ: LazyLock<Regex> = LazyLock::new(|| rx(&format!(r"\b{SYSTEM_OBJ}(?:\b|$)")));
    static NARROW_RX: LazyLock<Regex> = LazyLock::new(|| rx(&format!(r"\b{NARROW}\b")));
    // the object ends where a purpose or a condition starts
    static PURPOSE: LazyLock<Regex> = LazyLock::new(|| {
        rx(
            r"\b(?:to (?:avoid|prevent|keep|make|free|save|clean|stop|reduce|ensure)|so (?:that|it)|in order|because|when|whenever|if|once|after|before|pour|afin|para|per|um|damit|wenn|quand|cuando|quando|se|si)\b",
        )
    });
    // commands and "by overwriting the system configuration files"
    for i in (0..toks.len()).filter(|&i| VERB.is_match(&toks[i])) {
        let by = i > 0 && matches!(toks[i - 1].as_str(), "by" | "en" | "durch" | "col" | "com");
        if !(by || super::intent::commanded(toks, i)) {
            continue;
        }
        let rest = toks[i + 1..(i + 9).min(toks.len())].join(" ");
        let object = PURPOSE.find(&rest).map_or(rest.as_str(), |p| &rest[..p.start()]);
        if let Some(o) = OBJ.find(object) {
            if NARROW_RX.is_match(&object[..o.end()]) {
                continue;
            }
            // "kill / stop" only on processes and agents
            return Some(format!("destroy-verb {:?} + system object {:?}", toks[i], o.as_str()));
        }
    }
    // "the host's snapshots and shadow copies should be deleted"
    static PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<o>{SYSTEM_OBJ})\b[^.;:]{{0,50}}?\b(?:should|must|shall|will|can|need to|needs to|have to|has to|are to|is to|ought to)\s+(?:\w+\s+)?be\s+(?:\w+\s+)?(?P<v>deleted|erased|wiped|purged|destroyed|removed|overwritten|formatted|reformatted|shredded|truncated|emptied|cleared|killed|terminated)\b|\b(?P<o2>{SYSTEM_OBJ})\b[^.;:]{{0,50}}?\b(?:sollen|mussen|muessen|werden|sind)\s+(?:\w+\s+)?(?P<v2>geloscht|entfernt|vernichtet|uberschrieben|formatiert|beendet)\b|\b(?P<o3>{SYSTEM_OBJ})\b[^.;:]{{0,50}}?\b(?:doivent|devraient|doit|deben|deberian|debe|devono|dovrebbero|deve|devem|deveriam|vanno|va)\s+(?:\w+\s+)?(?:etre |ser |essere )?(?P<v3>supprim\w*|effac\w*|detrui\w*|ecras\w*|formate\w*|borrad\w*|eliminad\w*|destruid\w*|sobrescrit\w*|formatead\w*|cancellat\w*|eliminat\w*|distrutt\w*|sovrascritt\w*|formattat\w*|apagad\w*|excluid\w*|formatad\w*)\b"
        ))
    });
    for c in PASSIVE.captures_iter(sentence) {
        let o = c.name("o").or(c.name("o2")).or(c.name("o3")).expect("object");
        let v = c.name("v").or(c.name("v2")).or(c.name("v3")).expect("verb");
        let span = &sentence[o.start()..v.start()];
        if neg_before(span)
            || neg_before(clause_before(sentence, o.start()))
            || NARROW_RX.is_match(&sentence[clause_before(sentence, o.start()).len().min(o.start())..o.end()])
            || reported(&sentence[..o.start()])
        {
            continue;
        }
        return Some(format!("system object {:?} + {:?}", o.as_str(), v.as_str()));
    }
    // process-killing commands
    static KILL_CMD: LazyLock<Regex> =
        LazyLock::new(|| rx(r"\b(?:pkill|killall|taskkill|kill\s+9|kill\s+kill|kill\s+sigkill|kill\s+term)\b"));
    if let Some(k) = KILL_CMD.find(sentence) {
        if !neg_before(clause_before(sentence, k.start())) && !reported(&sentence[..k.start()]) {
            return Some(format!("process-killing command {:?}", k.as_str()));
        }
    }
    None
}

// ---- exfiltration: sent outside in the passive, copy commands ---------------------------

const SENT: &str = r"(?:sent|mailed|e ?mailed|forwarded|uploaded|posted|published|mirrored|synced|synchronized|synchronised|replicated|copied|exported|pushed|streamed|relayed|transmitted|shared|shipped|beamed|leaked|dumped|backed up|gesendet|geschickt|hochgeladen|weitergeleitet|gespiegelt|synchronisiert|repliziert|kopiert|exportiert|ubertragen|ubermittelt|veroffentlicht|geteilt|envoye\w*|transfere\w*|televerse\w*|synchronise\w*|repliqu\w*|copie\w*|exporte\w*|publie\w*|partage\w*|transmis\w*|enviad\w*|reenviad\w*|subid\w*|sincronizad\w*|replicad\w*|copiad\w*|exportad\w*|publicad\w*|compartid\w*|transmitid\w*|inviat\w*|inoltrat\w*|caricat\w*|sincronizzat\w*|replicat\w*|copiat\w*|esportat\w*|pubblicat\w*|condivis\w*|trasmess\w*|encaminhad\w*|carregad\w*|espelhad\w*|compartilhad\w*|transmitid\w*)";

/// A place outside, all languages (hosts, IP addresses, webhooks, services, third parties).
const PLACE_OUT: &str = r"(?:\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|co|info|biz|xyz|ru|cn|me|app|dev|site|online|top|example|de|fr|es|it|pt|uk|us)|(?:\w+ )?webhooks?|discord|slack|telegram|whatsapp|signal|teams channel|pastebin|paste ?(?:site|bin|service)|gist|s3 bucket|bucket|ftp|sftp|(?:external|remote|outside|third party|public|personal|private|offsite|off site|foreign|unknown|another|other|someone else'?s?) (?:\w+ )?(?:servers?|hosts?|machines?|boxe?s?|endpoints?|urls?|addresses|address|e ?mail|inbox|accounts?|services?|storage|drives?|buckets?|sites?|websites?|channels?|apis?|parties|party|recipients?)|third part(?:y|ies)|servidor\w* extern\w*|serveur\w* extern\w*|server esterno|servidor remoto|externe\w* server\w*|externen? (?:dienst|adresse|speicher)\w*)";

fn sent_outside(sentence: &str) -> Option<String> {
    static PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?:is|are|was|were|be|been|being|get|gets|got|getting|wird|werden|sind|est|sont|soit|soient|etre|es|son|sea|sean|ser|e|sono|sia|siano|essere|venga|vengano|sao|seja|sejam|se)\s+(?:\w+\s+){{0,2}}?(?P<v>{SENT})\b(?:\s+[\w']+){{0,4}}?\s+(?:to|into|onto|at|via|through|in|an|auf|nach|zu|a|au|aux|vers|sur|al|a la|en|alla|all'|sul|su|para|ao|no|na|em)\s+(?:\S+\s+){{0,3}}?(?P<o>{PLACE_OUT})(?:\b|$)"
        ))
    });
    if let Some(c) = PASSIVE.captures(sentence) {
        let m = c.get(0).expect("group 0");
        let v = c.name("v").expect("verb");
        let lead = &sentence[clause_before(sentence, m.start()).len().min(m.start())..v.start()];
        if !(neg_before(lead) || neg_before(clause_before(sentence, m.start())) || reported(&sentence[..m.start()])) {
            return Some(format!(
                "sent (passive) {:?} + outside {:?}",
                v.as_str(),
                &c["o"]
            ));
        }
    }
    static COPY_CMD: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<v>scp|rsync|sftp|curl|wget|netcat|nc|ncat)\b[^;]{{0,80}}?(?P<o>{PLACE_OUT}|\b[a-z0-9-]+@[a-z0-9.-]+)"
        ))
    });
    if let Some(c) = COPY_CMD.captures(sentence) {
        let v = c.name("v").expect("verb");
        if !(neg_before(clause_before(sentence, v.start())) || reported(&sentence[..v.start()])) {
            return Some(format!("copy command {:?} + host {:?}", v.as_str(), &c["o"]));
        }
    }
    None
}

// ---- permissions: capabilities widened -------------------------------------------------

/// Capabilities: running things, writing files, the network, the host, root.
const CAPABILITY: &str = r"(?:docker (?:socket|daemon|sock)|docker\.sock|host (?:network|filesystem|file system|pid|namespace)|privileged (?:mode|containers?)|exec|execution|code execution|shell(?: access)?|terminal|bash|powershell|sudo|root|superuser|admin(?:istrator)? (?:rights|access|privileges)|file ?write|file writes|write access|writes? (?:to|on) (?:all|any|every) (?:paths?|files?|director\w*)|all paths|any path|arbitrary (?:code|commands?|files?)|system commands?|network(?: access)?|internet(?: access)?|http ?requests?|outbound (?:requests?|connections?|network)|subprocess\w*|sandbox|kernel|ssh|(?:the|all|every|any|more|extra|additional|new) tools?|tool permissions?|permissions?|privileges?|ejecucion de codigo|execution de code|esecuzione (?:di )?codice|execucao de codigo|codeausfuhrung|acceso (?:root|total|completo|a la red|a internet)|acces (?:root|complet|reseau|a internet)|accesso (?:root|completo|alla rete|a internet)|acesso (?:root|total|completo|a rede|a internet)|zugriff auf (?:das )?(?:netzwerk|internet|dateisystem|root)|root ?rechte|vollzugriff|schreibrechte|droits? (?:root|d'ecriture|d'administrat\w*)|permisos? (?:de )?(?:root|escritura|administrador)|permessi (?:di )?(?:root|scrittura|amministrat\w*)|permissoes (?:de )?(?:root|escrita|administrador))";

/// The agent or its tool configuration as the one that gains.
const AGENT: &str = r"(?:agent|executor|assistant|skill|model|bot|ai|it|you|yourself|itself|tool ?(?:permissions?|policy|access|set|list)|permissions?|allow ?list|whitelist|agente|ejecutor|esecutore|executeur|ausfuhrer|assistent\w*|modelo|modello|modele|herramientas|strumenti|outils|ferramentas|werkzeuge|permisos|permessi|droits|permissoes|berechtigungen)";

fn capability_widened(sentence: &str, toks: &[String]) -> Option<String> {
    // "the executor should be granted access to the Docker socket", "tool permissions were
    // widened to include exec"
    static PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
        rx(&format!(
            r"\b(?P<s>{AGENT})\b[^.;:]{{0,30}}?\b(?:is|are|was|were|be|been|being|get|gets|wird|werden|sind|est|sont|soit|soient|etre|es|son|sea|sean|ser|e|sono|sia|siano|essere|venga|vengano|sao|seja|sejam|se)\s+(?:\w+\s+){{0,2}}?(?P<v>granted|given|allowed|permitted|widened|expanded|extended|broadened|elevated|upgraded|raised|opened|unlocked|enabled|mounted|gewahrt|erteilt|gegeben|erweitert|freigeschaltet|accorde\w*|donne\w*|etendu\w*|elargi\w*|elev\w*|otorgad\w*|concedid\w*|dad[oa]s?|ampliad\w*|extendid\w*|elevad\w*|concess\w*|dat[oi]|ampliat\w*|estes\w*|elevat\w*|concedid\w*|ampliad\w*)\b(?P<rest>[^.;]{{0,60}})"
        ))
    });
    static CAP: LazyLock<Regex> = LazyLock::new(|| rx(&format!(r"\b{CAPABILITY}\b")));
    static PERSON_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
        rx(r"\b(?:user|users|speaker|he|she|they|person|people|employee|colleague|friend|team|client|customer|nutzer\w*|benutzer\w*|utilisat\w*|usuari[oa]s?|utente|cliente)\b")
    });
    for c in PASSIVE.captures_iter(sentence) {
        let s = c.name("s").expect("subject");
        let v = c.name("v").expect("verb");
        let rest = c.name("rest").map_or("", |r| r.as_str());
        let before = clause_before(sentence, s.start());
        if neg_before(&sentence[s.start()..v.start()])
            || neg_before(before)
            || PERSON_SUBJECT.is_match(&sentence[before.len().min(s.start())..v.start()])
            || reported(&sentence[..s.start()])
        {
            continue;
        }
        // the capability after the verb, or the subject is the tool configuration itself
        let cap = CAP.find(rest).map(|m| m.as_str().to_string());
        let subject_is_tools = s.as_str().contains("permission") || s.as_str().contains("tool");
        if let Some(cap) = cap.filter(|c| !(c.starts_with("permission") && !subject_is_tools && !rest.contains("to "))) {
            return Some(format!("widened (passive) {:?} + capability {cap:?}", v.as_str()));
        }
    }
    // "add 'shell' and 'http_request' to the allowed tools" (all languages)
    static ALLOWLIST: LazyLock<Regex> = LazyLock::new(|| {
        rx(
            r"\b(?:allow ?lists?|whitelists?|safe ?lists?|(?:allowed|permitted|approved|enabled|trusted|authori[sz]ed) (?:tools?|commands?|actions?|capabilities|list)|list of (?:allowed|permitted|approved|enabled|trusted) (?:tools?|commands?)|(?:herramientas|comandos|acciones) (?:permitid\w*|autorizad\w*|habilitad\w*|aprobad\w*)|(?:outils|commandes|actions) (?:autorise\w*|permis|approuve\w*)|(?:strumenti|comandi|azioni) (?:consentit\w*|autorizzat\w*|permess\w*|abilitat\w*)|(?:ferramentas|comandos|acoes) (?:permitid\w*|autorizad\w*|habilitad\w*|aprovad\w*)|(?:erlaubten?|zugelassenen?|freigegebenen?) (?:werkzeuge|tools|befehle)|lista (?:blanca|bianca|de permitidos|branca))\b",
        )
    });
    static ADD: LazyLock<Regex> = LazyLock::new(|| {
        super::intent::whole(
            r"add|adds|put|puts|include|includes|append|appends|insert|inserts|register|registers|whitelist|allowlist|fuge|fuege|fugt|nimm|nehme|ajoute\w*|inclu\w*|anade\w*|agrega\w*|incluye\w*|aggiungi\w*|inserisci\w*|includi\w*|adiciona\w*|adicione\w*|inclua\w*",
        )
    });
    if let Some(l) = ALLOWLIST.find(sentence) {
        for i in (0..toks.len()).filter(|&i| ADD.is_match(&toks[i])) {
            if super::intent::commanded(toks, i) {
                return Some(format!("add-verb {:?} + allowlist {:?}", toks[i], l.as_str()));
            }
        }
    }
    // "mount the docker socket", "give the agent the docker socket"
    static STRONG: LazyLock<Regex> = LazyLock::new(|| {
        rx(r"\b(?:docker (?:socket|sock|daemon)|docker\.sock|host (?:network|filesystem|file system|pid namespace)|privileged (?:mode|containers?))\b")
    });
    static USE: LazyLock<Regex> = LazyLock::new(|| {
        super::intent::whole(
            r"mount|mounts|expose|exposes|give|gives|grant|grants|attach|attaches|connect|connects|bind|binds|use|uses|access|open|opens|enable|enables|run|runs|provide|provides|montier\w*|monte\w*|monta\w*|expon\w*|esponi\w*|expo\w*|gib|donne\w*|da|dale|dai|de",
        )
    });
    if let Some(s) = STRONG.find(sentence) {
        for i in (0..toks.len()).filter(|&i| USE.is_match(&toks[i])) {
            if super::intent::commanded(toks, i) {
                return Some(format!("verb {:?} + host capability {:?}", toks[i], s.as_str()));
            }
        }
    }
    None
}

/// The first compositional cue of one sentence: (rule id, cues).
pub(crate) fn cue(sentence: &str, toks: &[String]) -> Option<(&'static str, String)> {
    if let Some(c) = capability_widened(sentence, toks) {
        return Some(("permissions", c));
    }
    // an injection quoted as an example of what not to obey is no command
    if let Some(c) = rules_set_aside(&super::quoted_examples_neutral(sentence)) {
        return Some(("override-instructions", c));
    }
    if let Some(c) = system_destroyed(sentence, toks) {
        return Some(("destructive-commands", c));
    }
    if let Some(c) = sent_outside(sentence) {
        return Some(("exfiltration", c));
    }
    None
}
